// The admitted-run skeleton on its own: the stop switch (client, time limit, first reason kept, closed for good), and
// admission, queueing and settlement, where every path (refused, failed to queue, settled twice) settles once.
import { describe, expect, test } from "bun:test";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { ApiError } from "../../../src/errors/api-error.ts";
import { type Admission, admitRun, type AdmittedRunDeps, RunStop } from "../../../src/inference/admitted-run.ts";
import { emptyUsage, type Usage } from "../../../src/inference/blocks.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";
import { sqliteOf } from "../../helpers/databases.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const model: ModelEntry = { ...parseManifest(fakeManifest("skeleton-model-v1"), ["fp32"]), dir: "/nowhere" };
const used: Usage = { ...emptyUsage(), inputTokens: 5, outputTokens: 3 };
const asks = { inputTokens: 5, maxOutputTokens: 10, choices: 1 };

describe("RunStop", () => {
  test("the client leaving trips it as client_gone; the first reason is kept", () => {
    const client = new AbortController();
    const stop = new RunStop(client.signal, null);
    expect(stop.reason).toBeNull();
    client.abort();
    expect(stop.reason).toBe("client_gone");
    expect(stop.signal.reason).toBe("client_gone");
    stop.abort("failed");
    expect(stop.reason).toBe("client_gone");
    stop.close();
  });

  test("a client already gone trips it at once; a detached run (null) only stops on abort()", () => {
    const gone = new AbortController();
    gone.abort();
    expect(new RunStop(gone.signal, null).reason).toBe("client_gone");
    const detached = new RunStop(null, null);
    detached.abort("cancelled");
    expect(detached.signal.aborted).toBe(true);
    expect(detached.reason).toBe("cancelled");
  });

  test("the time limit trips it as timed_out; closed, neither the timer nor the client trips it any more", async () => {
    const timed = new RunStop(null, 20);
    await waitFor(() => timed.reason, { what: "the time limit" });
    expect(timed.reason).toBe("timed_out");
    const client = new AbortController();
    const closed = new RunStop(client.signal, 20);
    closed.close();
    const later = new RunStop(null, 40);
    await waitFor(() => later.reason, { what: "a later time limit" });
    client.abort();
    expect(closed.reason).toBeNull();
    expect(closed.signal.aborted).toBe(false);
  });

  test("cut: a failure once tripped is the stop's answer (504, 499); before it, the failure itself; check throws once tripped", async () => {
    const timed = new RunStop(null, 1000);
    timed.abort("timed_out");
    expect(await apiRefusal(timed.cut(Promise.reject(new Error("fetch aborted"))))).toMatchObject({ status: 504, code: "gateway_timeout" });
    expect(() => timed.check()).toThrow(ApiError);
    const client = new AbortController();
    const left = new RunStop(client.signal, null);
    client.abort();
    expect(await apiRefusal(left.cut(Promise.reject(new Error("decode aborted"))))).toMatchObject({ status: 499 });
    const running = new RunStop(null, null);
    await expect(running.cut(Promise.reject(new Error("bad image")))).rejects.toThrow("bad image");
    expect(await running.cut(Promise.resolve(7))).toBe(7);
    running.check();
    for (const s of [timed, left, running]) s.close();
  });
});

async function setup(admit?: (a: Admission) => Promise<{ release(u: Usage | null): void }>) {
  const db = await openDatabase(tempDir("kiln-skeleton-"));
  const team = await createTeam(db, "t");
  const key = await createKey(db, team.id, "k");
  const deps: AdmittedRunDeps = { db, logger: memoryLogger(), shutdown: { draining: false }, gate: admit && { admit } };
  const scope = { requestId: `req_${crypto.randomUUID()}`, teamId: team.id, keyId: key.id, endpoint: "chat" };
  const rows = () => sqliteOf(db).$client.query("SELECT status, input_tokens AS tokens, images FROM usage WHERE request_id = ?").all(scope.requestId);
  return { deps, scope, rows };
}

/** A gate that admits everything and records what it saw and every release. */
function recordingGate() {
  const admitted: Admission[] = [];
  const released: (Usage | null)[] = [];
  return { admitted, released, admit: async (a: Admission) => (admitted.push(a), { release: (u: Usage | null) => void released.push(u) }) };
}

describe("admitRun", () => {
  test("draining refuses before anything is prepared", async () => {
    const { deps, scope } = await setup();
    let prepared = false;
    const refusal = await apiRefusal(admitRun({ ...deps, shutdown: { draining: true } }, { scope, model, clientSignal: null, timeoutMs: null }, async () => {
      prepared = true;
      return asks;
    }));
    expect(refusal).toMatchObject({ status: 503, code: "server_shutting_down" });
    expect(prepared).toBe(false);
  });

  test("admission sees the scope, the model and what preparing counted; a refusal closes the switch and holds nothing", async () => {
    const gate = recordingGate();
    const { deps, scope } = await setup(gate.admit);
    const run = await admitRun(deps, { scope, model, clientSignal: null, timeoutMs: null }, async () => ({ ...asks, images: 2 }));
    expect(gate.admitted).toEqual([{ scope, model, ...asks, images: 2 }]);
    await run.settle(null);

    const client = new AbortController();
    let stop: RunStop | undefined;
    const refused = admitRun({ ...deps, gate: { admit: async () => Promise.reject(new ApiError(429, "rate_limit_error", "slow down", "rate_limit_exceeded")) } }, { scope, model, clientSignal: client.signal, timeoutMs: 20 }, async (s) => {
      stop = s;
      return asks;
    });
    expect(await apiRefusal(refused)).toMatchObject({ status: 429 });
    client.abort();
    expect(stop!.reason).toBeNull();
  });

  test("a failure while preparing is thrown and nothing is admitted", async () => {
    const gate = recordingGate();
    const { deps, scope, rows } = await setup(gate.admit);
    const run = admitRun(deps, { scope, model, clientSignal: null, timeoutMs: null }, async () => Promise.reject(new Error("tokenizer broke")));
    await expect(run).rejects.toThrow("tokenizer broke");
    expect(gate.admitted).toHaveLength(0);
    expect(rows()).toEqual([]);
  });

  test("refused at the queue: the hold goes back unbilled, once, and a later settle writes nothing", async () => {
    const gate = recordingGate();
    const { deps, scope, rows } = await setup(gate.admit);
    const run = await admitRun(deps, { scope, model, clientSignal: null, timeoutMs: null }, async () => asks);
    expect(() => run.submit(() => {
      throw ApiError.overloaded();
    })).toThrow(ApiError);
    await run.settle({ status: "completed", usage: used });
    expect(gate.released).toEqual([null]);
    expect(rows()).toEqual([]);
  });

  test("settled twice, at once: one usage row with the images, one release with the usage", async () => {
    const gate = recordingGate();
    const { deps, scope, rows } = await setup(gate.admit);
    const run = await admitRun(deps, { scope, model, clientSignal: null, timeoutMs: null }, async () => asks);
    const end = { status: "completed" as const, usage: used, images: 2 };
    await Promise.all([run.settle(end), run.settle({ status: "failed", usage: emptyUsage() })]);
    await run.settle(null);
    expect(rows()).toEqual([{ status: "completed", tokens: 5, images: 2 }]);
    expect(gate.released).toEqual([used]);
  });

  test("settle(null) writes no row and gives the hold back unused", async () => {
    const gate = recordingGate();
    const { deps, scope, rows } = await setup(gate.admit);
    const run = await admitRun(deps, { scope, model, clientSignal: null, timeoutMs: null }, async () => asks);
    await run.settle(null);
    expect(rows()).toEqual([]);
    expect(gate.released).toEqual([null]);
  });

  test("the queue gets the run's signal and start hook: onStarted once, dispatched from then on", async () => {
    const { deps, scope } = await setup();
    let started = 0;
    const run = await admitRun(deps, { scope, model, clientSignal: null, timeoutMs: null, onStarted: () => started++ }, async () => asks);
    const got = run.submit((signal, onStart) => ({ signal, onStart }));
    expect(got.signal).toBe(run.stop.signal);
    expect(run.dispatched).toBe(false);
    got.onStart();
    got.onStart();
    expect(run.dispatched).toBe(true);
    expect(started).toBe(1);
    await run.settle(null);
  });

  test("the time limit runs from before admission and aborts the queued work; the client leaving does the same", async () => {
    const { deps, scope, rows } = await setup();
    const timed = await admitRun(deps, { scope, model, clientSignal: null, timeoutMs: 20 }, async () => asks);
    const signal = timed.submit((s) => s);
    await waitFor(() => signal.aborted, { what: "the time limit's abort" });
    expect(timed.stop.reason).toBe("timed_out");
    await timed.settle({ status: "timed_out", usage: emptyUsage() });
    expect(rows()).toEqual([{ status: "timed_out", tokens: 0, images: 0 }]);

    const client = new AbortController();
    const run = await admitRun(deps, { scope: { ...scope, requestId: `${scope.requestId}_2` }, model, clientSignal: client.signal, timeoutMs: null }, async () => asks);
    const queued = run.submit((s) => s);
    client.abort();
    expect(queued.aborted).toBe(true);
    expect(run.stop.reason).toBe("client_gone");
    await run.settle(null);
  });
});
