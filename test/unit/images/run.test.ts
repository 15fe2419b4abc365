// The images lifecycle over a scripted scheduler: admission before queueing (402 before any render), one usage row
// with the images delivered and its charge, siblings stopped on a failure, and the client leaving or the time limit.
import { describe, expect, test } from "bun:test";
import { credit, ledgerOf, setBillingEnabled } from "../../../src/db/billing-repo.ts";
import { ApiError } from "../../../src/errors/api-error.ts";
import { type Rendered, runRenders } from "../../../src/images/run.ts";
import { parseDiffusionLayout } from "../../../src/models/diffusion-layout.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import { Channel } from "../../../src/scheduler/channel.ts";
import type { RenderEvent, RenderSubmission } from "../../../src/scheduler/scheduler.ts";
import { testKiln } from "../../helpers/kiln.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const diffusion = parseDiffusionLayout({ resolution: 64 }, { vaeScale: 8, unetScale: 2, nativeResolution: 64, textLength: 77, edits: true });
const model = { id: "img-model-v1", pricing: { inputPerMillion: 0, cachedInputPerMillion: 0, outputPerMillion: 0, perImage: 0.01 }, diffusion } as unknown as ModelEntry;
const image: Rendered = { rgb: new Uint8Array(3), width: 1, height: 1, timings: { textMs: 1, encodeMs: 0, denoiseMs: 4, decodeMs: 1 } };

/** A scheduler whose renders the test ends by hand; it records what was submitted and what was cancelled. */
function scripted() {
  const jobs: { sub: RenderSubmission; channel: Channel<RenderEvent>; cancelled: boolean }[] = [];
  return {
    jobs,
    assertServing: () => {},
    submitRenders(subs: RenderSubmission[]) {
      return subs.map((sub) => {
        const job = { sub, channel: new Channel<RenderEvent>(), cancelled: false };
        sub.onStart?.();
        sub.signal?.addEventListener("abort", () => {
          job.cancelled = true;
          job.channel.close();
        });
        jobs.push(job);
        return job.channel;
      });
    },
  };
}

async function setup(opts: { billed?: number } = {}) {
  const k = await testKiln();
  if (opts.billed !== undefined) {
    await setBillingEnabled(k.deps.db, k.teamId, true);
    if (opts.billed) await credit(k.deps.db, k.teamId, opts.billed, null);
  }
  const scheduler = scripted();
  const deps = { ...k.deps, scheduler };
  let n = 0;
  const job = (count: number, client = new AbortController().signal, timeoutMs = 60_000) => ({
    scope: { requestId: `req_img_${++n}`, teamId: k.teamId, keyId: k.keyId, endpoint: "images" },
    model, renders: Array.from({ length: count }, (_, i) => ({ promptIds: [1], guidance: 0, width: 64, height: 64, steps: 1, seed: i })),
    promptTokens: 9, clientSignal: client, timeoutMs,
  });
  const row = (requestId: string) =>
    sqliteOf(k.deps.db).$client.query("SELECT status, images, input_tokens AS tokens, cost_micros AS cost, endpoint FROM usage WHERE request_id = ?").get(requestId) as Record<string, unknown> | null;
  const until = async (f: () => boolean) => {
    while (!f()) await new Promise((r) => setImmediate(r));
  };
  return { k, deps, scheduler, job, row, until };
}

describe("the images lifecycle", () => {
  test("every image delivered: one completed usage row with the images and the prompt tokens, charged per image", async () => {
    const { k, deps, scheduler, job, row, until } = await setup({ billed: 1_000_000 });
    const j = job(2);
    const done = runRenders(deps, j);
    await until(() => scheduler.jobs.length === 2);
    for (const s of scheduler.jobs) {
      s.channel.push({ type: "rendered", ...image });
      s.channel.close();
    }
    expect(await done).toHaveLength(2);
    expect(row(j.scope.requestId)).toEqual({ status: "completed", images: 2, tokens: 9, cost: 20_000, endpoint: "images" });
    expect((await ledgerOf(k.deps.db, k.teamId, 10))[0]).toMatchObject({ amountMicros: -20_000, requestId: j.scope.requestId });
  });

  test("a balance that cannot cover n images is a 402 before any render is queued", async () => {
    const { deps, scheduler, job } = await setup({ billed: 15_000 });
    expect(await apiRefusal(runRenders(deps, job(2)))).toMatchObject({ status: 402, code: "billing_not_configured", message: expect.stringContaining("ask for fewer images") });
    expect(scheduler.jobs).toHaveLength(0);
  });

  test("one render failing stops its siblings; the row is failed with no images billed", async () => {
    const { deps, scheduler, job, row, until } = await setup();
    const j = job(3);
    const done = runRenders(deps, j);
    await until(() => scheduler.jobs.length === 3);
    scheduler.jobs[0]!.channel.push({ type: "rendered", ...image });
    scheduler.jobs[0]!.channel.close();
    scheduler.jobs[1]!.channel.fail(new ApiError(503, "server_error", "The image model produced an unusable image; retry the request"));
    expect(await apiRefusal(done)).toMatchObject({ status: 503, code: null });
    expect(scheduler.jobs[2]!.cancelled).toBe(true);
    expect(row(j.scope.requestId)).toMatchObject({ status: "failed", images: 0, cost: 0, tokens: 9 });
  });

  test("the client leaving cancels the renders (client_gone); the time limit answers 504 (timed_out)", async () => {
    const { deps, scheduler, job, row, until } = await setup();
    const client = new AbortController();
    const gone = job(1, client.signal);
    const left = runRenders(deps, gone);
    await until(() => scheduler.jobs.length === 1);
    client.abort();
    expect(await apiRefusal(left)).toMatchObject({ status: 499 });
    expect(row(gone.scope.requestId)).toMatchObject({ status: "client_gone", images: 0 });
    const slow = job(1, new AbortController().signal, 20);
    expect(await apiRefusal(runRenders(deps, slow))).toMatchObject({ status: 504, code: "gateway_timeout" });
    expect(scheduler.jobs[1]!.cancelled).toBe(true);
    expect(row(slow.scope.requestId)).toMatchObject({ status: "timed_out", images: 0 });
  });

  test("draining refuses before admission", async () => {
    const { deps, scheduler, job } = await setup();
    expect(await apiRefusal(runRenders({ ...deps, shutdown: { draining: true } }, job(1)))).toMatchObject({ status: 503, code: "server_shutting_down" });
    expect(scheduler.jobs).toHaveLength(0);
  });
});
