// Stored streams and background jobs: the response row and its input items are written before the first event,
// the run is driven to its end by record.ts, and a background job needs no client at all. Recovery after a crash
// or a shutdown lives here too, since it launches the same way.
import type { AppDeps } from "../../app-deps.ts";
import { settle } from "../../billing/settle.ts";
import { endResponse, type Fence, LeaseLost, lastSequence, updateResponse } from "../../db/response-events-repo.ts";
import {
  deleteResponse, inputItems, insertResponse, markFailed, type NewResponseRow, type ResponseRow, type StoredItem, unfinishedResponses,
} from "../../db/responses-repo.ts";
import { ApiError } from "../../errors/api-error.ts";
import { newRequestId } from "../../http/request-id.ts";
import type { RequestScope } from "../../inference/admitted-run.ts";
import { type Run, startRun } from "../../inference/text-run.ts";
import type { ModelEntry } from "../../models/registry.ts";
import { textModel } from "../text-model.ts";
import { requestedLane } from "../service-tier-field.ts";
import { ResponseAssembler } from "./assembler.ts";
import { planResponse } from "./plan.ts";
import { drive, ResponseRecorder } from "./record.ts";
import type { ResponsesRequestBody } from "./schema.ts";
import { echo } from "./echo.ts";
import type { ResponsesPlan } from "./validate.ts";
import type { JobRecovery, Recovery } from "../../live/recovery.ts";

/** A background job that was queued when kiln stopped is started again at most this many times in all. */
export const MAX_ATTEMPTS = 3;

/** Statuses of the gate's refusals (key, billing, permissions) that end a recovered job with their own error. */
const REFUSALS = new Set([401, 402, 403]);

export interface Launch {
  body: ResponsesRequestBody;
  model: ModelEntry;
  plan: ResponsesPlan;
  scope: RequestScope;
  id: string;
  createdAt: number;
  background: boolean;
  /** The client's connection for a stored stream (its leaving cancels the response); null for a background job. */
  clientSignal: AbortSignal | null;
  /** A new response: its row and input items are written. A recovered one: its row exists and events continue. */
  fresh: { items: StoredItem[]; requestJson: string; bytes: number } | null;
  /** The claim of the response this run holds (its row's lease_epoch): 0 for a new one. */
  epoch: number;
}

/** The assembler of a response: its id, model and creation time, the request fields it echoes, and how it reasons. */
export function newAssembler(
  deps: AppDeps,
  a: { id: string; model: ModelEntry; createdAt: number; body: ResponsesRequestBody; plan: ResponsesPlan; scope: RequestScope; queued?: boolean },
): ResponseAssembler {
  return new ResponseAssembler({
    id: a.id, model: a.model.id, createdAt: a.createdAt, echo: echo(a.body, a.plan, a.scope.tier), sealer: deps.sealer,
    includeEncrypted: a.plan.includeEncrypted, includeLogprobs: a.plan.includeLogprobs, summary: a.plan.summary, queued: a.queued,
  });
}

/** A new response's row: owner, request, the response as it stands, and when retention ends. */
export function responseRow(
  deps: AppDeps,
  r: { id: string; scope: RequestScope; model: ModelEntry; body: ResponsesRequestBody; createdAt: number; requestJson: string; asm: ResponseAssembler; storedBytes: number; background: boolean },
): NewResponseRow {
  return {
    id: r.id, teamId: r.scope.teamId, keyId: r.scope.keyId, model: r.model.id, status: r.asm.status, background: r.background,
    previousResponseId: r.body.previous_response_id ?? null, requestJson: r.requestJson, responseJson: JSON.stringify(r.asm.response()),
    storedBytes: r.storedBytes, attempts: r.background ? 1 : 0, createdAt: r.createdAt, updatedAt: Math.floor(Date.now() / 1000),
    expiresAt: r.createdAt + deps.config.responseRetentionDays * 86_400,
    // Whoever runs it holds it (a lease past the insert, on the database's clock); with several replicas, another
    // takes it over when this one stops renewing (leases.ts).
    leaseOwner: deps.live.replica, leaseEpoch: 0,
    // A re-launch settles under the same request id, so the job is charged once whichever run settles first.
    requestId: r.scope.requestId,
  };
}

/**
 * Starts the run, writes the row, and drives the run in the background. Returns the response as it was created
 * (queued, for a background job, even when a worker took it at once), which is what the create request answers.
 */
export async function launch(deps: AppDeps, l: Launch): Promise<Record<string, unknown>> {
  const asm = newAssembler(deps, { ...l, queued: l.background });
  let rec: ResponseRecorder | null = null;
  let started = false;
  const run = await startRun(deps, {
    scope: l.scope, model: l.model, request: l.plan.request, clientSignal: l.clientSignal, timeoutMs: null,
    // A recovered job was acknowledged before the restart: a rate limit that filled up since does not refuse it
    // (its key, permissions and balance are checked again all the same).
    resumed: !l.fresh,
    resumable: l.background,
    onStarted: () => {
      started = true;
      if (!rec) return;
      rec.emit(asm.begin());
      rec.save();
    },
  });
  let inserted = false;
  // On Postgres every write names the lease it is made under; on SQLite one process runs everything.
  const fence: Fence | null = deps.db.dialect === "postgres" ? { owner: deps.live.replica, epoch: l.epoch } : null;
  try {
    // Live before its row can be read, so whoever finds the row (a cancel, a follower) finds the job running.
    deps.live.begin(l.id, run.abort);
  } catch (e) {
    // Already running here: that run and its entry stay as they are, and this one, never started, settles nothing.
    run.forfeit();
    throw e;
  }
  try {
    if (l.fresh) {
      const row = responseRow(deps, { ...l, asm, requestJson: l.fresh.requestJson, storedBytes: l.fresh.bytes });
      await insertResponse(deps.db, row, l.fresh.items, [], deps.config.leaseMs);
      inserted = true;
    }
    // Renewed from now on (the row holds the lease); claimed by another replica, the run here stops and writes no more.
    if (fence) {
      deps.live.hold(l.id, {
        epoch: l.epoch,
        lost: () => {
          rec?.discard();
          run.forfeit();
        },
      });
    }
    rec = new ResponseRecorder(deps, asm, { nextSequence: l.fresh ? 0 : (await lastSequence(deps.db, l.id)) + 1, storedBytes: l.fresh?.bytes ?? 0, fence });
    // A recovered job's log already holds its created and queued events.
    rec.emit(l.fresh ? asm.start() : []);
    const created = asm.response();
    if (started) rec.emit(asm.begin());
    rec.save();
    void drive(deps, run, asm, rec, l.background);
    return created;
  } catch (e) {
    rec?.discard();
    await undoLaunch(deps, l, run, inserted);
    throw e;
  }
}

/**
 * A launch that failed part-way: nothing will drive the run, so it stops, its live entry ends (followers hear the end
 * instead of waiting for ever), and a new response's row goes, since nothing was acknowledged (the error is the
 * answer). A recovered job's row stays for recovery to end.
 */
async function undoLaunch(deps: AppDeps, l: Launch, run: Run, inserted: boolean): Promise<void> {
  run.abort("failed");
  deps.live.end(l.id);
  if (!inserted) return;
  try {
    await deleteResponse(deps.db, l.id, l.scope.teamId);
  } catch (e) {
    deps.logger.error("stored response not removed after a failed start", { response_id: l.id, error: String(e) });
  }
}

/** The stored request of a job, as the body it was created with. */
async function bodyOf(deps: AppDeps, row: ResponseRow): Promise<ResponsesRequestBody> {
  const request = JSON.parse(row.requestJson) as Omit<ResponsesRequestBody, "input">;
  return { ...request, input: (await inputItems(deps.db, row.id)).map((s) => s.item) } as ResponsesRequestBody;
}

/**
 * Ends a stored response that nothing is running any more: failed with a retryable server_error (a job a restart
 * interrupted), or cancelled (a cancel of a job whose run is gone). Its log gets the closing event; a row whose JSON
 * cannot be read is ended all the same.
 */
export async function endStored(
  deps: Pick<AppDeps, "db">, row: ResponseRow, end: { status: "failed"; message: string; code?: string } | { status: "cancelled" }, fence: Fence | null = null,
): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  let response: Record<string, unknown>;
  try {
    response = JSON.parse(row.responseJson) as Record<string, unknown>;
  } catch {
    response = { id: row.id, object: "response", created_at: row.createdAt, model: row.model, output: [], usage: null };
  }
  Object.assign(response, { status: end.status, completed_at: now, ...(end.status === "failed" ? { error: { code: end.code ?? "server_error", message: end.message } } : {}) });
  const type = end.status === "failed" ? "response.failed" : "response.incomplete";
  // Numbered after the last stored event in the same transaction that stores it; one already ended is left alone.
  await endResponse(deps.db, row.id, (sequence) => {
    const eventJson = JSON.stringify({ type, response, sequence_number: sequence });
    return { eventJson, set: { status: end.status, responseJson: JSON.stringify(response), storedBytes: row.storedBytes + Buffer.byteLength(eventJson) } };
  }, fence);
}

/** The Responses family's recovery, which the job upkeep (src/live/upkeep.ts) runs at start and on lease take-overs. */
export function jobRecovery(deps: AppDeps): JobRecovery {
  return { recover: (rows) => recoverRows(deps, rows), recoverAll: () => recoverBackground(deps) };
}

/**
 * Responses a crash or shutdown left behind (at start-up none is live, so every unfinished row is one). A queued
 * background job never produced output, so it runs again from its stored input (up to MAX_ATTEMPTS starts, so a job
 * that kills kiln cannot loop). One that was in progress had already streamed part of its output under sequence
 * numbers clients may hold, and sampling would not repeat it: it ends failed with a retryable server_error rather
 * than being silently replaced. A stored stream (not background) lost its client with the process: failed too.
 */
export async function recoverBackground(deps: AppDeps): Promise<Recovery> {
  return await recoverRows(deps, await unfinishedResponses(deps.db));
}

/**
 * Ends or starts again responses nothing runs any more: every unfinished one at a lone kiln's start, or those whose
 * replica stopped renewing its lease (leases.ts), claimed by this one.
 */
export async function recoverRows(deps: AppDeps, rows: ResponseRow[]): Promise<Recovery> {
  const out: Recovery = { restarted: [], failed: [] };
  for (const row of rows) {
    try {
      await recoverOne(deps, row, out);
    } catch (e) {
      // Claimed meanwhile by another replica: it is that one's to end.
      if (e instanceof LeaseLost) continue;
      // One unreadable row must not keep kiln from starting: it is ended failed in plain SQL.
      deps.logger.error("stored response not recovered", { response_id: row.id, error: String(e) });
      await markFailed(deps.db, row.id);
      out.failed.push(row.id);
    }
  }
  return out;
}

/**
 * A job recovery ends without running it (again) still gets its usage row, under its own request id: nothing used, or,
 * when an earlier run settled already, that run's row, which stays as it is (one row per request id).
 */
async function settleUnrun(deps: AppDeps, row: ResponseRow): Promise<void> {
  if (!row.requestId) return;
  await settle(deps, {
    requestId: row.requestId, teamId: row.teamId, keyId: row.keyId, model: row.model, endpoint: "responses", status: "failed",
    inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0, images: 0, costMicros: 0, createdAt: Math.floor(Date.now() / 1000),
  });
}

async function recoverOne(deps: AppDeps, row: ResponseRow, out: Recovery): Promise<void> {
  // On Postgres the row was claimed for this replica: its end is written under that claim.
  const fence: Fence | null = deps.db.dialect === "postgres" ? { owner: deps.live.replica, epoch: row.leaseEpoch } : null;
  const fail = async (message: string, code?: string) => {
    await endStored(deps, row, { status: "failed", message, code }, fence);
    out.failed.push(row.id);
    await settleUnrun(deps, row);
  };
  if (!row.background) return fail("kiln restarted while this response was streaming; create it again.");
  if (row.status === "in_progress") return fail("kiln restarted while this background response was running; create it again.");
  if (row.attempts >= MAX_ATTEMPTS) return fail(`This background response was started ${row.attempts} times without finishing; create it again.`);
  try {
    const body = await bodyOf(deps, row);
    const model = textModel(deps, row.model);
    const plan = await planResponse(deps, body, model, row.teamId);
    await updateResponse(deps.db, row.id, { status: row.status, responseJson: row.responseJson, attempts: row.attempts + 1 });
    const lane = requestedLane(body.service_tier);
    await launch(deps, {
      body, model, plan, id: row.id, createdAt: row.createdAt, background: true, clientSignal: null, fresh: null, epoch: row.leaseEpoch,
      // The request id the job was created under (rows stored before it was kept get a new one): settled once.
      // The lane its stored request asked for.
      scope: { requestId: row.requestId ?? newRequestId(), teamId: row.teamId, keyId: row.keyId, endpoint: "responses", ...(lane !== "default" ? { tier: lane } : {}) },
    });
    out.restarted.push(row.id);
  } catch (e) {
    // A key revoked or restricted, or an account lapsed or spent, since the job was accepted: the refusal is its failure.
    if (e instanceof ApiError && REFUSALS.has(e.status)) return fail(e.message, e.code ?? e.type);
    await fail(`kiln restarted before this background response ran, and ${e instanceof ApiError ? e.message : "it could not be started again"}`);
  }
}
