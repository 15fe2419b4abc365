// One batch running on this replica, under the epoch of its claim: it validates the input file (validating), then runs
// its lines (in_progress), each through its endpoint's service as the batch's key and team are now, in the batch lane,
// under a request id derived from the batch and the line, and at most as many at once as the process's line slots
// allow; then it writes the output and error files and ends (completed, cancelled or expired). A cancel, the window's
// end or the loss of the lease stop it at its next look (at most a second): running lines are cut and go back to
// pending. A drain only stops new lines: the running ones finish or, cut by the drain, go back to pending.
import type { AppDeps } from "../../app-deps.ts";
import { authOf } from "../../auth/authenticate.ts";
import { type BatchRow, batchById, claimLines, endLine, moveBatch, openLines, releaseLines, startBatch } from "../../db/batches-repo.ts";
import { findActiveKeyWithTeam } from "../../db/keys-repo.ts";
import { ApiError } from "../../errors/api-error.ts";
import { openTeamFile } from "../../files/team-file.ts";
import { checkLineBody, runLine } from "./endpoints.ts";
import { type BatchEnding, finalizeBatch } from "./finalize.ts";
import { lineIds, lineOutcome } from "./line-outcome.ts";
import type { BatchEndpointPath } from "./schema.ts";
import type { Slots } from "./slots.ts";
import { parseBatchInput } from "./validate.ts";

/** How often a running batch looks at its row (a cancel from another replica, its lease) and its window. */
export const LOOK_EVERY_MS = 1000;

type Stop = "cancel" | "expire" | "lost" | "drain";

const nowS = () => Math.floor(Date.now() / 1000);

/** Why a batch stops here, from its row as read now; null: it runs on. Pure. */
export function stopOf(row: BatchRow | undefined, held: { owner: string; epoch: number }, now: number, draining: boolean): Stop | null {
  if (!row || row.leaseOwner !== held.owner || row.leaseEpoch !== held.epoch) return "lost";
  if (row.status === "cancelling") return "cancel";
  // A batch already writing its files ends completed, however late.
  if (now >= row.expiresAt && row.status !== "finalizing") return "expire";
  return draining ? "drain" : null;
}

const ENDING: Record<"cancel" | "expire", BatchEnding> = { cancel: "cancelled", expire: "expired" };

export class BatchRun {
  readonly #cut = new AbortController();
  readonly #inflight = new Set<Promise<void>>();
  #stop: Stop | null = null;
  #wake: (() => void) | null = null;
  /** Something happened while the loop was not waiting (a line ended): it looks again before it waits. */
  #woken = false;
  readonly done: Promise<void>;

  constructor(private readonly deps: AppDeps, private batch: BatchRow, private readonly slots: Slots, private readonly owner: string) {
    this.done = this.#run().catch((e) => deps.logger.error("batch run failed", { batch_id: batch.id, error: String(e) }));
  }

  get epoch(): number {
    return this.batch.leaseEpoch;
  }

  /** Looks at the row again now (a cancel, a drain). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Another replica claimed the batch: nothing more is written here. */
  lose(): void {
    this.#halt("lost");
  }

  #halt(stop: Stop): void {
    this.#stop ??= stop;
    if (stop !== "drain") this.#cut.abort(new ApiError(499, "invalid_request_error", `The batch stopped (${stop}).`));
    this.wake();
  }

  async #look(): Promise<void> {
    const row = await batchById(this.deps.db, this.batch.id);
    if (row && row.leaseEpoch === this.batch.leaseEpoch) this.batch = row;
    const stop = stopOf(row, { owner: this.owner, epoch: this.batch.leaseEpoch }, nowS(), this.deps.shutdown.draining);
    if (stop) this.#halt(stop);
  }

  async #run(): Promise<void> {
    if (this.batch.status === "validating") await this.#validate();
    await this.#look();
    if (this.batch.status === "failed") return;
    if (this.batch.status === "in_progress") await this.#runLines();
    await Promise.all(this.#inflight);
    const stop = this.#stop;
    if (stop === "lost" || stop === "drain") return;
    if (stop) return await this.#finish(ENDING[stop]);
    if (this.batch.status === "in_progress" && !(await moveBatch(this.deps.db, this.batch.id, ["in_progress"], { status: "finalizing", finalizingAt: nowS() }))) {
      // Cancelled between the last look and now: it ends cancelled with what completed (or another replica has it).
      await this.#look();
      if (this.#stop === "cancel") await this.#finish("cancelled");
      return;
    }
    await this.#finish("completed");
  }

  async #finish(ending: BatchEnding): Promise<void> {
    if (!(await finalizeBatch(this.deps, this.batch, this.batch.leaseEpoch, this.owner, ending))) return;
    this.deps.logger.info("batch ended", { batch_id: this.batch.id, status: ending });
  }

  async #validate(): Promise<void> {
    const b = this.batch;
    const endpoint = b.endpoint as BatchEndpointPath;
    let text: string;
    try {
      const { stored } = await openTeamFile(this.deps, b.teamId, b.inputFileId, "input_file_id");
      text = new TextDecoder().decode(await stored.bytes());
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      const errorsJson = JSON.stringify([{ line: null, code: e.code ?? "invalid_request", message: e.message, param: e.param }]);
      await moveBatch(this.deps.db, b.id, ["validating"], { status: "failed", failedAt: nowS(), errorsJson });
      return;
    }
    const parsed = parseBatchInput(text, endpoint, (body) => checkLineBody(this.deps, endpoint, body));
    if (!parsed.ok) await moveBatch(this.deps.db, b.id, ["validating"], { status: "failed", failedAt: nowS(), errorsJson: JSON.stringify(parsed.errors) });
    else await startBatch(this.deps.db, b.id, parsed.lines, nowS());
  }

  async #runLines(): Promise<void> {
    let nextLook = 0;
    while (!this.#stop) {
      if (Date.now() >= nextLook) {
        await this.#look();
        nextLook = Date.now() + LOOK_EVERY_MS;
        if (this.#stop) break;
      }
      if (this.deps.shutdown.draining) this.#halt("drain");
      if (this.#stop) break;
      const free = this.slots.free();
      const claimed = free > 0 ? await claimLines(this.deps.db, this.batch.id, free) : [];
      for (const line of claimed) {
        this.slots.take();
        const p = this.#runOne(line).finally(() => {
          this.slots.give();
          this.#inflight.delete(p);
          this.wake();
        });
        this.#inflight.add(p);
      }
      if (!claimed.length && !this.#inflight.size && free > 0 && (await openLines(this.deps.db, this.batch.id)) === 0) return;
      if (this.#woken) {
        this.#woken = false;
        continue;
      }
      // Until a line ends, a slot frees (another batch's line ended), a cancel, or the next look.
      await new Promise<void>((resolve) => {
        let unslot = () => {};
        const done = () => {
          this.#woken = false;
          clearTimeout(timer);
          unslot();
          resolve();
        };
        const timer = setTimeout(done, Math.max(1, nextLook - Date.now()));
        unslot = this.slots.onFree(done);
        this.#wake = done;
      });
      this.#wake = null;
    }
  }

  async #runOne(l: { line: number; customId: string; bodyJson: string }): Promise<void> {
    const { db } = this.deps;
    const b = this.batch;
    const ids = lineIds(b.id, l.line);
    for (;;) {
      let run: { answer: unknown } | { error: unknown };
      try {
        const found = await findActiveKeyWithTeam(db, b.keyId);
        if (!found) throw new ApiError(401, "authentication_error", "The API key this batch was created with is no longer active.", "invalid_api_key");
        const call = { auth: authOf(found), requestId: ids.requestId, signal: this.#cut.signal, tier: "batch" as const, batchId: b.id };
        run = { answer: await runLine(this.deps, b.endpoint as BatchEndpointPath, JSON.parse(l.bodyJson) as Record<string, unknown>, call) };
      } catch (error) {
        run = { error };
      }
      const stopping = this.#stop !== null && this.#stop !== "drain";
      const outcome = lineOutcome(run, ids, l.customId, stopping);
      if (outcome.kind === "retry") {
        await new Promise((r) => setTimeout(r, outcome.afterMs));
        if (!this.#stop) continue;
        await releaseLines(db, b.id, [l.line]);
        return;
      }
      if (outcome.kind === "release") {
        // A run this replica lost is the new owner's to put back; its write would be refused anyway.
        if (this.#stop !== "lost") await releaseLines(db, b.id, [l.line]);
        return;
      }
      if (await endLine(db, b.id, l.line, outcome.kind, JSON.stringify(outcome.result))) this.deps.metrics.batchLineEnded(b.endpoint, outcome.kind);
      return;
    }
  }
}
