// Runs a stored response to its end whoever is listening: each assembler event is numbered, then stored and, once
// stored, published by the write queue (one transaction per generation step), and the response row follows every
// status change. A client that leaves only stops listening (and, unless the response is a background one, its
// text run aborts the run).
import type { Db } from "../../db/client.ts";
import { ApiError } from "../../errors/api-error.ts";
import { type Fence, LeaseLost } from "../../db/response-events-repo.ts";
import { type StorageFaultKind, storageFaultOf } from "../../fs/storage-fault.ts";
import { responseExists, TERMINAL } from "../../db/responses-repo.ts";
import type { Run } from "../../inference/text-run.ts";
import type { Logger } from "../../log/logger.ts";
import type { ResponseAssembler, ResponseEvent } from "./assembler.ts";
import type { LiveEvent } from "../../live/live-bus.ts";
import type { LiveResponses } from "../../live/live.ts";
import { type WriteQueue, writeQueueOf } from "../../live/write-queue.ts";

export interface RecorderDeps {
  db: Db;
  live: LiveResponses;
  logger: Logger;
  shutdown: { draining: boolean };
}

export class ResponseRecorder {
  private next: number;
  /** Set once the response's row is gone (deleted while it ran) or the recorder discarded: later writes are skipped. */
  private gone = false;
  private readonly queue: WriteQueue;
  /** The lease its writes are made under (Postgres): once another replica claims the response, they are refused. */
  private readonly fence: Fence | null;
  bytes: number;
  /** The storage fault that stopped this response's writes: nothing more is stored or published, and the run stops. */
  fault: StorageFaultKind | null = null;
  /** Told once, when a write fails with a storage fault (drive stops the run: nothing it produces could be kept). */
  onFault: (() => void) | null = null;

  constructor(
    private readonly deps: RecorderDeps,
    private readonly asm: ResponseAssembler,
    o: { nextSequence: number; storedBytes: number; fence?: Fence | null },
  ) {
    this.next = o.nextSequence;
    this.bytes = o.storedBytes;
    this.fence = o.fence ?? null;
    this.queue = writeQueueOf(deps.db, deps.logger);
  }

  /** Numbers the events now; they are stored, then published, when the queue flushes (at the latest after this macrotask). */
  emit(events: ResponseEvent[]): void {
    const id = this.asm.id;
    for (const ev of events) {
      const sequence = this.next++;
      const json = JSON.stringify({ ...ev, sequence_number: sequence });
      this.bytes += Buffer.byteLength(json);
      const live: LiveEvent = { sequence, type: ev.type, json };
      this.queue.push({
        write: () => (this.gone ? null : { kind: "event", responseId: id, sequence, json, fence: this.fence }),
        failed: (e) => this.failed(e),
        // An event whose storage failed is not published either: listeners see what the store has, then the error.
        after: () => {
          if (!this.fault) this.deps.live.publish(id, live);
        },
      });
      // A poll mid-run sees every finished item, and a crash loses at most the item being written.
      if (ev.type === "response.output_item.done") this.save();
    }
  }

  /** Writes the response row as it stands now (in order with the events before it). */
  save(): void {
    const responseJson = JSON.stringify(this.asm.response());
    const set = { status: this.asm.status, responseJson, storedBytes: this.bytes + Buffer.byteLength(responseJson) };
    const reasoningIds = this.asm.reasoningIds();
    this.queue.push({
      write: () => (this.gone ? null : { kind: "row", responseId: this.asm.id, set, reasoningIds, fence: this.fence }),
      failed: (e) => this.failed(e),
    });
  }

  /** Drops this recorder's queued and later writes: its launch failed, and the row is removed or ended elsewhere. */
  discard(): void {
    this.gone = true;
  }

  /** Stores and publishes what is queued now: before a job's end is announced, its last event is out. */
  flush(): Promise<void> {
    return this.queue.flush();
  }

  /**
   * Listeners' streams end with the error event of the storage fault, after everything queued before it (it cannot be
   * stored: the stored response stays unfinished, and is ended failed by recovery once the storage is back).
   */
  announceFault(): void {
    if (!this.fault) return;
    const err = ApiError.storageFault(this.fault);
    const sequence = this.next++;
    const json = JSON.stringify({ type: "error", code: err.code, message: err.message, param: null, sequence_number: sequence });
    this.queue.push({ write: () => null, failed: () => {}, after: () => this.deps.live.publish(this.asm.id, { sequence, type: "error", json }) });
  }

  /**
   * A failed write is logged and the next one is tried all the same (a busy disk), so the final state still lands; a
   * response deleted while it ran, or taken over by another replica (its run here stops), stops the writes, and so
   * does a storage fault (a full or unwritable disk), which stops the response.
   */
  private async failed(e: unknown): Promise<void> {
    if (e instanceof LeaseLost && this.fence) {
      this.gone = true;
      this.deps.live.lose(this.asm.id, this.fence.epoch);
      return;
    }
    const fault = storageFaultOf(e);
    if (fault) {
      if (this.fault) return;
      this.fault = fault;
      this.gone = true;
      this.deps.logger.error("stored response stopped: its storage failed", { response_id: this.asm.id, error: String(e) });
      this.onFault?.();
      return;
    }
    if (!(await responseExists(this.deps.db, this.asm.id))) {
      this.gone = true;
      return;
    }
    this.deps.logger.error("stored response not updated", { response_id: this.asm.id, error: String(e) });
  }
}

/**
 * Feeds the run's events through the assembler into the recorder until the run ends, then leaves the row in its
 * final state. A background job cut by shutdown stays queued or in_progress for recovery at the next start; any
 * other run that ends without a terminal status (its worker was lost, the stream failed) ends with a stored
 * response.failed.
 */
export async function drive(deps: RecorderDeps, run: Run, asm: ResponseAssembler, rec: ResponseRecorder, background: boolean): Promise<void> {
  rec.onFault = () => run.abort("failed");
  try {
    for await (const core of run.choices[0]!) rec.emit(asm.push(core));
  } catch (e) {
    deps.logger.error("response run failed", { response_id: asm.id, error: String(e) });
    // Nothing reads the run's events any more: it stops rather than generating for no one.
    run.abort("failed");
  }
  try {
    // The stream-level error live listeners got is not the response's end: the stored log ends with response.failed.
    if (!TERMINAL.has(asm.status) && !(background && deps.shutdown.draining)) {
      rec.emit(asm.abandon("The response stopped before it finished (its model worker stopped or failed); create it again."));
    }
    rec.save();
  } catch (e) {
    deps.logger.error("response not ended", { response_id: asm.id, error: String(e) });
  } finally {
    await rec.flush();
    // The fault may have struck the last writes, after the run ended: listeners still get their terminal event.
    rec.announceFault();
    await rec.flush();
    await run.settled.catch(() => undefined);
    deps.live.end(asm.id);
  }
}
