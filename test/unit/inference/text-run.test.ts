// The shared text run over a fake core: admission hook, abort reasons, and one settlement with real counts.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { localDirOf, openDatabase } from "../../../src/db/client.ts";
import { usage } from "../../../src/db/schema.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { ApiError } from "../../../src/errors/api-error.ts";
import { collectChoice } from "../../../src/inference/blocks.ts";
import { type Admission, type AdmissionTicket, settleStatus } from "../../../src/inference/admitted-run.ts";
import { type TextRunDeps, startRun, totalUsage } from "../../../src/inference/text-run.ts";
import { credit, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { billingAccounts, ledger } from "../../../src/db/schema.ts";
import type { Usage } from "../../../src/inference/blocks.ts";
import { resolvePromptFormat } from "../../../src/inference/prompt-format.ts";
import { journalPathFor, readJournal } from "../../../src/billing/settlement-journal.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import { Admissions } from "../../../src/scheduler/admissions.ts";
import type { SeqEvent, SeqRequest } from "../../../src/scheduler/scheduler.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { waitFor } from "../../helpers/wait-for.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const model: ModelEntry = { ...parseManifest(fakeManifest("life-model-v1"), ["fp32"]), dir: "/nowhere" };
const u = (o: number, r = 0) => ({ inputTokens: 7, outputTokens: o, reasoningTokens: r, cachedTokens: 0 });

describe("pure parts", () => {
  test("settleStatus: an abort says why; otherwise an error means failed", () => {
    expect(settleStatus(null, false)).toBe("completed");
    expect(settleStatus(null, true)).toBe("failed");
    expect(settleStatus("client_gone", true)).toBe("client_gone");
    expect(settleStatus("timed_out", false)).toBe("timed_out");
    expect(settleStatus("cancelled", false)).toBe("cancelled");
  });

  test("totalUsage counts the prompt once and adds the outputs", () => {
    expect(totalUsage([u(3, 1), u(4, 2)], 7)).toEqual({ inputTokens: 7, outputTokens: 7, reasoningTokens: 3, cachedTokens: 0 });
  });

  test("totalUsage: the choices share one prompt, so its cached part is the most any choice read from the cache", () => {
    expect(totalUsage([{ ...u(3), cachedTokens: 2 }, { ...u(4), cachedTokens: 5 }], 7)).toEqual({ inputTokens: 7, outputTokens: 7, reasoningTokens: 0, cachedTokens: 5 });
  });
});

/**
 * A scheduler whose sequences emit one token per 5 ms until aborted (then finish cancelled with the real count);
 * `produced` counts the tokens of all its sequences so far.
 */
function tickingScheduler(limit: number, submitted: SeqRequest[], produced: { tokens: number }) {
  return {
    assertServing: () => {},
    submit(reqs: SeqRequest[]) {
      submitted.push(...reqs);
      // Every sequence gets a worker at once.
      for (const r of reqs) r.onStart?.();
      return reqs.map((r) => (async function* (): AsyncGenerator<SeqEvent> {
        let n = 0;
        while (n < limit && !r.signal?.aborted) {
          await Bun.sleep(5);
          n++;
          produced.tokens++;
          yield { type: "delta", text: "x", tokens: 1 };
        }
        yield { type: "finish", finish: { seqId: "s", reason: n < limit ? "cancelled" : "length", promptTokens: 0, outputTokens: n } };
      })());
    },
  };
}

async function deps(limit: number, submitted: SeqRequest[], admit?: (a: Admission) => Promise<AdmissionTicket>) {
  const db = await openDatabase(tempDir("kiln-life-"));
  const team = await createTeam(db, "t");
  const key = await createKey(db, team.id, "k");
  const produced = { tokens: 0 };
  const d: TextRunDeps = {
    db, logger: memoryLogger(), shutdown: { draining: false }, gate: admit && { admit },
    scheduler: tickingScheduler(limit, submitted, produced),
    tokenizers: {
      get: async () => ({
        format: resolvePromptFormat(undefined, "", () => false), stopTokenIds: [], specialTokens: new Map(), vocabSize: 64, encodeText: () => [], decodeText: () => "", minTokens: () => 0,
        renderChat: () => "prompt", encodePrompt: async () => [1, 2, 3, 4, 5, 6, 7],
      }),
    },
  };
  return { d, db, produced, scope: { requestId: `req_${crypto.randomUUID()}`, teamId: team.id, keyId: key.id, endpoint: "chat" } };
}

const request = (n = 1) => ({
  conversation: [{ role: "user" as const, parts: [{ type: "text" as const, text: "hi" }] }],
  tools: null, toolChoice: "none" as const, answerFormat: { kind: "text" as const }, n, maxTokens: 50,
  temperature: 0, topP: 1, seed: 1, stop: [], ignoreEos: false,
});

describe("startRun", () => {
  test("the run counts as coming for its model while it is prepared and admitted, not once submitted, nor after a refusal", async () => {
    const admissions = new Admissions();
    const submitted: SeqRequest[] = [];
    const pendingAtAdmission: number[] = [];
    const admitted = await deps(2, submitted, async () => (pendingAtAdmission.push(admissions.pending(model.id)), { release() {} }));
    // The scheduler reads the count as it queues the run's sequences: by then this run no longer counts.
    const pendingAtSubmit: number[] = [];
    const submit = admitted.d.scheduler.submit.bind(admitted.d.scheduler);
    admitted.d.scheduler.submit = (reqs) => (pendingAtSubmit.push(admissions.pending(model.id)), submit(reqs));
    const run = await startRun({ ...admitted.d, admissions }, { scope: admitted.scope, model, request: request(), clientSignal: null, timeoutMs: null });
    await run.settled;
    expect([pendingAtAdmission, pendingAtSubmit, admissions.pending(model.id)]).toEqual([[1], [0], 0]);

    const refused = await deps(2, [], async () => {
      throw new ApiError(429, "rate_limit_error", "slow down", "rate_limit_exceeded");
    });
    await expect(startRun({ ...refused.d, admissions }, { scope: refused.scope, model, request: request(), clientSignal: null, timeoutMs: null })).rejects.toThrow("slow down");
    expect(admissions.pending(model.id)).toBe(0);

    // A batch line is not waited for: a running batch prepares lines all the time.
    const seenInBatch: number[] = [];
    const line = await deps(2, [], async () => (seenInBatch.push(admissions.pending(model.id)), { release() {} }));
    await (await startRun({ ...line.d, admissions }, { scope: { ...line.scope, tier: "batch" }, model, request: request(), clientSignal: null, timeoutMs: null })).settled;
    expect(seenInBatch).toEqual([0]);
  });

  test("admission sees the counted prompt before anything is queued; a refusal queues nothing and writes no usage", async () => {
    const submitted: SeqRequest[] = [];
    const seen: number[] = [];
    const { d, db, scope } = await deps(3, submitted, async (a) => {
      seen.push(a.inputTokens, a.maxOutputTokens, a.choices);
      throw new ApiError(429, "rate_limit_error", "slow down", "rate_limit_exceeded");
    });
    await expect(startRun(d, { scope, model, request: request(2), clientSignal: null, timeoutMs: null })).rejects.toThrow("slow down");
    expect(seen).toEqual([7, 50, 2]);
    expect(submitted).toEqual([]);
    expect(sqliteOf(db).select().from(usage).all()).toEqual([]);
  });

  test("siblings (the legacy format's prompts) are admitted, run and billed as one request, their choices in order", async () => {
    const submitted: SeqRequest[] = [];
    const seen: number[] = [];
    const { d, db, scope } = await deps(3, submitted, async (a) => (seen.push(a.inputTokens, a.choices), { release() {} }));
    const raw = (ids: number[]) => ({ ...request(2), conversation: [], rawPrompt: ids });
    const run = await startRun(d, { scope, model, request: raw([1, 2]), siblings: [raw([3, 4, 5])], clientSignal: null, timeoutMs: null });
    expect(seen).toEqual([5, 4]);
    expect(submitted.map((s) => s.promptIds)).toEqual([[1, 2], [1, 2], [3, 4, 5], [3, 4, 5]]);
    expect(run.choices).toHaveLength(4);
    const s = await run.settled;
    expect([s.usage.inputTokens, s.usage.outputTokens]).toEqual([5, 12]);
    const rows = sqliteOf(db).select().from(usage).where(eq(usage.requestId, scope.requestId)).all();
    expect(rows.map((r) => [r.inputTokens, r.outputTokens])).toEqual([[5, 12]]);
  });

  test("a client that leaves mid-run: the core keeps counting until it stops, and one row records the real tokens", async () => {
    const submitted: SeqRequest[] = [];
    const { d, db, produced, scope } = await deps(1000, submitted);
    const client = new AbortController();
    const run = await startRun(d, { scope, model, request: request(2), clientSignal: client.signal, timeoutMs: null });
    // Nobody reads the choices: the run drains them itself.
    await waitFor(() => produced.tokens >= 10, { what: "10 tokens from the two choices" });
    client.abort();
    const s = await run.settled;
    expect(s.status).toBe("client_gone");
    expect(s.usage.outputTokens).toBeGreaterThanOrEqual(10);
    expect(s.usage.outputTokens).toBeLessThan(2000);
    const rows = sqliteOf(db).select().from(usage).where(eq(usage.requestId, scope.requestId)).all();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "client_gone", inputTokens: 7, outputTokens: s.usage.outputTokens });
  });

  test("the time limit aborts as timed_out; a detached run (no client) runs to its end", async () => {
    const timed = await deps(1000, []);
    const run = await startRun(timed.d, { scope: timed.scope, model, request: request(), clientSignal: null, timeoutMs: 40 });
    const r = await collectChoice(run.choices[0]!);
    expect(r.finish).toBe("cancelled");
    expect(run.abortReason).toBe("timed_out");
    expect((await run.settled).status).toBe("timed_out");

    const bg = await deps(10, []);
    const detached = await startRun(bg.d, { scope: bg.scope, model, request: request(), clientSignal: null, timeoutMs: null });
    expect(await detached.settled).toEqual({ status: "completed", usage: { inputTokens: 7, outputTokens: 10, reasoningTokens: 0, cachedTokens: 0 } });
  });

  test("intake runs before counting; a time limit or a leaving client during it stops it: 504, or 499 in the log; nothing queued", async () => {
    const submitted: SeqRequest[] = [];
    const { d, db, scope } = await deps(10, submitted);
    const seen: { keyId: number; teamId: number }[] = [];
    // An intake that waits (a slow fetch or decode) until it is aborted, then rejects with the abort's reason.
    d.intake = {
      prepare: (_req, _model, who, signal) => {
        seen.push({ teamId: who.teamId, keyId: who.keyId });
        return new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
      },
    };
    const timedOut = await startRun(d, { scope, model, request: request(), clientSignal: null, timeoutMs: 40 }).catch((e) => e);
    expect([timedOut.status, timedOut.code]).toEqual([504, "gateway_timeout"]);
    const client = new AbortController();
    const gone = startRun(d, { scope, model, request: request(), clientSignal: client.signal, timeoutMs: null }).catch((e) => e);
    client.abort();
    expect((await gone).status).toBe(499);
    expect(seen).toEqual([{ teamId: scope.teamId, keyId: scope.keyId }, { teamId: scope.teamId, keyId: scope.keyId }]);
    expect(submitted).toEqual([]);
    expect(sqliteOf(db).select().from(usage).all()).toEqual([]);
  });

  test("metrics: one TTFT per choice, an inter-token gap per later token, and the settled usage counted once", async () => {
    const { d, scope } = await deps(4, []);
    const seen = { ttft: [] as number[], itl: [] as number[], usage: [] as [object, object][] };
    d.metrics = {
      observeFirstToken: (labels, s) => {
        expect(labels).toEqual({ model: model.id, endpoint: "chat" });
        seen.ttft.push(s);
      },
      observeInterToken: (_l, s) => seen.itl.push(s),
      observeUsage: (labels, usage) => seen.usage.push([labels, usage]),
      settlementFailed: () => {},
      settlementsReplayed: () => {},
    };
    const run = await startRun(d, { scope, model, request: request(2), clientSignal: null, timeoutMs: null });
    await run.settled;
    expect(seen.ttft).toHaveLength(2);
    // Each sequence ticks every 5 ms: a first token no sooner than that, later ones about that far apart.
    for (const s of seen.ttft) expect(s).toBeGreaterThanOrEqual(0.004);
    expect(seen.itl).toHaveLength(2 * 3);
    for (const s of seen.itl) expect(s).toBeGreaterThan(0.002);
    expect(seen.usage).toEqual([[{ model: model.id, endpoint: "chat", team: String(scope.teamId) }, { inputTokens: 7, outputTokens: 8, reasoningTokens: 0, cachedTokens: 0 }]]);
  });

  test("the admission ticket is released once, with the usage settled (or null when nothing was queued)", async () => {
    const released: (Usage | null)[] = [];
    const ticket = async (): Promise<AdmissionTicket> => ({ release: (u) => void released.push(u) });
    const ok = await deps(4, [], ticket);
    const run = await startRun(ok.d, { scope: ok.scope, model, request: request(), clientSignal: null, timeoutMs: null });
    const s = await run.settled;
    expect(released).toEqual([s.usage]);
    expect(s.usage).toMatchObject({ inputTokens: 7, outputTokens: 4 });

    const failing = await deps(4, [], ticket);
    failing.d.scheduler = { assertServing: () => {}, submit: () => { throw ApiError.overloaded(); } };
    await expect(startRun(failing.d, { scope: failing.scope, model, request: request(), clientSignal: null, timeoutMs: null })).rejects.toMatchObject({ status: 503 });
    expect(released).toEqual([s.usage, null]);
  });

  test("a billed team's charge is written with the usage row: same amount, balance after it", async () => {
    const priced = { ...model, pricing: { inputPerMillion: 2, cachedInputPerMillion: 2, outputPerMillion: 10, perImage: 0 } };
    const { d, db, scope } = await deps(5, []);
    await setBillingEnabled(db, scope.teamId, true);
    await credit(db, scope.teamId, 1_000_000, "start");
    const run = await startRun(d, { scope, model: priced, request: request(), clientSignal: null, timeoutMs: null });
    await run.settled;
    const row = sqliteOf(db).select().from(usage).where(eq(usage.requestId, scope.requestId)).get()!;
    // 7 input × 2 + 5 output × 10 micro-units per token.
    expect(row.costMicros).toBe(64);
    const charge = sqliteOf(db).select().from(ledger).where(eq(ledger.requestId, scope.requestId)).get()!;
    expect(charge).toMatchObject({ kind: "charge", amountMicros: -64, balanceAfterMicros: 1_000_000 - 64, teamId: scope.teamId });
    expect(sqliteOf(db).select().from(billingAccounts).get()!.balanceMicros).toBe(1_000_000 - 64);
  });

  test("an unbilled team's usage row has no ledger entry", async () => {
    const { d, db, scope } = await deps(2, []);
    await (await startRun(d, { scope, model, request: request(), clientSignal: null, timeoutMs: null })).settled;
    expect(sqliteOf(db).select().from(usage).all()).toHaveLength(1);
    expect(sqliteOf(db).select().from(ledger).all()).toEqual([]);
  });

  test("a sequence that never left the queue is billed nothing, its prompt included", async () => {
    const { d, db, scope } = await deps(4, []);
    // A queue that never hands the sequence to a worker: it ends only when cancelled, as the scheduler ends it.
    d.scheduler = {
      assertServing: () => {},
      submit: (reqs: SeqRequest[]) => reqs.map((r) => (async function* (): AsyncGenerator<SeqEvent> {
        await new Promise((resolve) => r.signal!.addEventListener("abort", resolve, { once: true }));
        yield { type: "finish", finish: { seqId: "s", reason: "cancelled", promptTokens: 0, outputTokens: 0 } };
      })()),
    };
    const run = await startRun(d, { scope, model, request: request(), clientSignal: null, timeoutMs: null });
    run.abort("cancelled");
    expect(await run.settled).toEqual({ status: "cancelled", usage: { inputTokens: 0, outputTokens: 0, reasoningTokens: 0, cachedTokens: 0 } });
    expect(sqliteOf(db).select().from(usage).get()).toMatchObject({ inputTokens: 0, outputTokens: 0, costMicros: 0 });
  });

  test("a run forfeited (its job taken over) settles nothing if it never reached a worker, and as failed if it did", async () => {
    const queued = await deps(4, []);
    queued.d.scheduler = {
      assertServing: () => {},
      submit: (reqs: SeqRequest[]) => reqs.map((r) => (async function* (): AsyncGenerator<SeqEvent> {
        await new Promise((resolve) => r.signal!.addEventListener("abort", resolve, { once: true }));
        yield { type: "finish", finish: { seqId: "s", reason: "cancelled", promptTokens: 0, outputTokens: 0 } };
      })()),
    };
    const waiting = await startRun(queued.d, { scope: queued.scope, model, request: request(), clientSignal: null, timeoutMs: null });
    waiting.forfeit();
    expect((await waiting.settled).status).toBe("failed");
    // The job's new run settles under the same request id: this one wrote no row to take its place.
    expect(sqliteOf(queued.db).select().from(usage).all()).toEqual([]);
    const running = await deps(1000, []);
    const run = await startRun(running.d, { scope: running.scope, model, request: request(), clientSignal: null, timeoutMs: null });
    await waitFor(() => running.produced.tokens > 0, { what: "a token generated" });
    run.forfeit();
    expect((await run.settled).status).toBe("failed");
    expect(sqliteOf(running.db).select().from(usage).get()).toMatchObject({ requestId: running.scope.requestId, status: "failed" });
  });

  test("draining refuses before any work", async () => {
    const { d, scope } = await deps(1, []);
    d.shutdown.draining = true;
    await expect(startRun(d, { scope, model, request: request(), clientSignal: null, timeoutMs: null })).rejects.toMatchObject({ code: "server_shutting_down" });
  });
});

describe("startRun, the time limit and the settlement", () => {
  test("the time limit counts from the start of the run: a slow prepare uses it up, and the run ends timed_out", async () => {
    const slow = await deps(3, []);
    const get = slow.d.tokenizers.get.bind(slow.d.tokenizers);
    // Tokenizing takes 300 ms (a long prompt on a busy machine); the limit is 100 ms.
    slow.d.tokenizers = {
      get: async (m: ModelEntry) => {
        const tk = await get(m);
        return { ...tk, encodePrompt: async (...a: Parameters<typeof tk.encodePrompt>) => (await Bun.sleep(300), tk.encodePrompt(...a)) };
      },
    };
    const run = await startRun(slow.d, { scope: slow.scope, model, request: request(), clientSignal: null, timeoutMs: 100 });
    const s = await run.settled;
    expect(run.abortReason).toBe("timed_out");
    expect(s.status).toBe("timed_out");
    expect(s.usage.outputTokens).toBe(0);
  });

  test("a usage write the database refuses is journaled and counted, and the answer still settles", async () => {
    const { d, db, scope } = await deps(2, []);
    const failed: boolean[] = [];
    d.metrics = { observeFirstToken: () => {}, observeInterToken: () => {}, observeUsage: () => {}, settlementFailed: (j) => void failed.push(j), settlementsReplayed: () => {} };
    sqliteOf(db).$client.run("CREATE TRIGGER full_disk BEFORE INSERT ON usage BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
    const run = await startRun(d, { scope, model, request: request(), clientSignal: null, timeoutMs: null });
    expect(await run.settled).toEqual({ status: "completed", usage: { inputTokens: 7, outputTokens: 2, reasoningTokens: 0, cachedTokens: 0 } });
    expect(sqliteOf(db).select().from(usage).all()).toEqual([]);
    expect(failed).toEqual([true]);
    const journal = readJournal(journalPathFor(localDirOf(db))!);
    expect(journal.records.map((r) => [r.requestId, r.status, r.outputTokens])).toEqual([[scope.requestId, "completed", 2]]);
  });
});
