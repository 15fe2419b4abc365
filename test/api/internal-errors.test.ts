// Worker, load and tokenizer failures whose text holds a path and a stack: no answer (503 body, each format's stream
// error event, a background response's stored error, GET /v1/status) carries either; the log line does.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { eventsAfter } from "../../src/db/response-events-repo.ts";
import { startRuntime, type Runtime } from "../../src/inference/runtime.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { ModelRegistry, scanModels } from "../../src/models/registry.ts";
import type { ModelLoadSpec, ToWorker } from "../../src/protocol/text.ts";
import { fakeManifest, writeFakeModel } from "../helpers/fake-model.ts";
import { tempDir, testKiln, type TestKiln } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { FakeWorker } from "../unit/scheduler/fake-worker.ts";

const SECRET = "/secret/path/model.onnx: bad\n    at foo (/x/y.ts:1:2)";
const GOOD = "good-model-v1";
const NO_LOAD = "noload-model-v1";
const NO_TOKENIZER = "notok-model-v1";

/** What the fake worker does with the next sequence it is given, after one delta. */
let onAdd: "hold" | "error" | "fatal" = "hold";

/** An inference worker that loads at once (or fails to, for NO_LOAD) and answers each sequence with one delta. */
class ScriptedWorker extends FakeWorker {
  override postMessage(m: ToWorker): void {
    super.postMessage(m);
    queueMicrotask(() => {
      if (m.type === "shutdown") this.close();
      if (m.type === "load") this.load(m.model);
      if (m.type !== "add") return;
      this.reply({ type: "step", deltas: [{ seqId: m.seqId, text: "Hello", tokens: 1 }], finished: [] });
      if (onAdd === "error") this.reply({ type: "step", deltas: [], finished: [{ seqId: m.seqId, reason: "error", promptTokens: 3, outputTokens: 1, message: SECRET }] });
      if (onAdd === "fatal") this.reply({ type: "fatal", message: SECRET });
    });
  }

  private load(spec: ModelLoadSpec): void {
    if (spec.id === NO_LOAD) this.reply({ type: "load_error", modelId: spec.id, message: SECRET });
    else this.reply({ type: "loaded", modelId: spec.id, ms: 1 });
  }
}

/** A model folder with the tiny model's real tokenizer and no weights (the scripted worker needs none). */
async function tokenizerOnlyModel(modelsDir: string, id: string): Promise<void> {
  const tiny = await tinyModelDir();
  const dir = writeFakeModel(modelsDir, id, fakeManifest(id));
  for (const f of ["config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"]) copyFileSync(join(tiny, f), join(dir, f));
}

let k: TestKiln;
let runtime: Runtime;
const runtimeLogger = memoryLogger();
const workers: ScriptedWorker[] = [];

beforeAll(async () => {
  const modelsDir = tempDir();
  await tokenizerOnlyModel(modelsDir, GOOD);
  await tokenizerOnlyModel(modelsDir, NO_LOAD);
  writeFakeModel(modelsDir, NO_TOKENIZER, fakeManifest(NO_TOKENIZER));
  const registry = new ModelRegistry(scanModels(modelsDir).models);
  runtime = await startRuntime({
    registry, logger: runtimeLogger, workerUrl: "fake:inference",
    config: { workers: 1, threads: 1, maxQueue: 16, loadTimeoutS: 30 },
    spawnWorker: () => {
      const w = new ScriptedWorker();
      workers.push(w);
      return w;
    },
  });
  k = await testKiln({ modelsDir, runtime, registry });
});
afterAll(() => runtime.stop());

function expectClean(text: string): void {
  expect(text).not.toContain("/secret/path");
  expect(text).not.toContain("at foo");
  expect(text).not.toContain("/x/y.ts");
}

/** A worker of GOOD is ready to take a sequence. */
const goodReady = () => waitFor(() => runtime.pool.hasReadyWorker(GOOD), { what: `a ready worker of ${GOOD}` });

/** The live worker of GOOD once it holds a sequence. */
async function busyWorker(): Promise<ScriptedWorker> {
  const busy = await waitFor(() => workers.find((_, i) => runtime.pool.stats().some((s) => s.workerId === i + 1 && s.held > 0)), { what: "a worker holding a sequence" });
  return busy!;
}

/** Runs `send`, crashes the worker under it with the secret text, and returns the whole answer. */
async function crashUnder(send: () => Promise<Response>): Promise<{ res: Response; text: string }> {
  onAdd = "hold";
  await goodReady();
  const pending = send();
  (await busyWorker()).crash(SECRET);
  const res = await pending;
  return { res, text: await res.text() };
}

const chat = (extra: Record<string, unknown> = {}) => ({ model: GOOD, messages: [{ role: "user", content: "hi" }], max_tokens: 20, ...extra });

describe("internal error text never reaches a client", () => {
  test("a worker that crashes mid-sequence: the 503 body and the stream error of each format hold the fixed text only", async () => {
    const plain = await crashUnder(() => k.req("/v1/chat/completions", { method: "POST", json: chat() }));
    expect(plain.res.status).toBe(503);
    expect(plain.res.headers.get("retry-after")).toBe("60");
    expect(JSON.parse(plain.text).error).toEqual({ message: "The model's worker failed; retry the request", type: "server_error", param: null, code: "backend_unavailable" });
    expectClean(plain.text);

    const streams: [string, object][] = [
      ["/v1/chat/completions", chat({ stream: true })],
      ["/v1/responses", { model: GOOD, input: "hi", max_output_tokens: 20, stream: true }],
      ["/v1/messages", { model: GOOD, messages: [{ role: "user", content: "hi" }], max_tokens: 20, stream: true }],
    ];
    for (const [path, body] of streams) {
      const { res, text } = await crashUnder(() => k.req(path, { method: "POST", json: body }));
      expect(res.status).toBe(200);
      // The stream had started (the delta arrived) and ends with the format's error carrying the fixed text.
      expect(text).toContain("Hello");
      expect(text).toContain("The model's worker failed; retry the request");
      expectClean(text);
    }
    // Each failed request logged its id, model and the worker's own words.
    const failed = k.logs.filter((l) => l.msg === "request failed");
    expect(failed).toHaveLength(4);
    for (const l of failed) expect(l).toMatchObject({ model: GOOD, cause: "worker_lost", request_id: expect.stringMatching(/\S/), detail: `worker crashed: ${SECRET}` });
    expect(runtimeLogger.lines.filter((l) => l.msg === "worker lost").every((l) => l.reason === `worker crashed: ${SECRET}`)).toBe(true);
  });

  test("a background response whose worker crashes stores the fixed text as its error", async () => {
    const { res, text } = await crashUnder(() => k.req("/v1/responses", { method: "POST", json: { model: GOOD, input: "hi", max_output_tokens: 20, background: true } }));
    expect(res.status).toBe(200);
    const id = JSON.parse(text).id as string;
    const stored = await waitFor(async () => (await (await k.req(`/v1/responses/${id}`)).json()) as { status: string; error: unknown }, {
      what: `response ${id} failed`, until: (r) => r.status === "failed",
    });
    expect(stored.error).toMatchObject({ code: "server_error" });
    expectClean(JSON.stringify(stored));
    // Every event kept for replay, the stream's own error event included, holds the fixed text only.
    const events = (await eventsAfter(k.deps.db, id, -1)).map((e) => e.json);
    expect(events.find((e) => JSON.parse(e).type === "error")).toContain("The model's worker failed; retry the request");
    expect(JSON.parse(events.at(-1)!).type).toBe("response.failed");
    expectClean(events.join("\n"));
  });

  test("a sequence the worker ends with an error, and a worker's fatal message, answer fixed texts", async () => {
    await goodReady();
    onAdd = "error";
    const failedRun = await k.req("/v1/chat/completions", { method: "POST", json: chat() });
    const failedText = await failedRun.text();
    expect(failedRun.status).toBe(500);
    expect(JSON.parse(failedText).error.message).toBe("The model failed while generating; retry the request");
    expectClean(failedText);
    const id = failedRun.headers.get("x-request-id");
    expect(k.logs.find((l) => l.msg === "request failed" && l.request_id === id)).toMatchObject({ model: GOOD, cause: "generation_failed", detail: SECRET });

    onAdd = "fatal";
    const fatal = await k.req("/v1/chat/completions", { method: "POST", json: chat() });
    const fatalText = await fatal.text();
    expect(fatal.status).toBe(503);
    expect(JSON.parse(fatalText).error.message).toBe("The model's worker failed; retry the request");
    expectClean(fatalText);
    expect(k.logs.find((l) => l.msg === "request failed" && l.request_id === fatal.headers.get("x-request-id"))).toMatchObject({ detail: `worker failed: ${SECRET}` });
  });

  test("a model whose load failed and one whose tokenizer failed: /v1/status and their 503s say so in fixed words", async () => {
    const statusText = await (await k.req("/v1/status", { key: null })).text();
    expectClean(statusText);
    expect(statusText).not.toContain("Tokenizer must contain");
    const status = JSON.parse(statusText) as { model_statuses: { id: string; status: string; message: string | null }[]; service_message: string };
    expect(status.model_statuses.find((m) => m.id === NO_LOAD)).toEqual({ id: NO_LOAD, status: "outage", message: "the model could not be loaded" });
    expect(status.model_statuses.find((m) => m.id === NO_TOKENIZER)).toEqual({ id: NO_TOKENIZER, status: "outage", message: "the tokenizer could not be loaded" });
    expect(status.service_message).toContain(`${NO_LOAD} is outage: the model could not be loaded`);
    // The log has what the status page leaves out.
    expect(runtimeLogger.lines.find((l) => l.msg === "model failed to load")).toMatchObject({ model: NO_LOAD, reason: SECRET });
    expect(runtimeLogger.lines.find((l) => l.msg === "tokenizer failed to load")).toMatchObject({ model: NO_TOKENIZER, reason: expect.stringContaining("Tokenizer must contain") });

    const noTokenizer = await k.req("/v1/chat/completions", { method: "POST", json: chat({ model: NO_TOKENIZER }) });
    const body = await noTokenizer.text();
    expect(noTokenizer.status).toBe(503);
    expect(JSON.parse(body).error).toMatchObject({ code: "backend_unavailable", message: `The tokenizer of '${NO_TOKENIZER}' could not be loaded; retry later` });
    expect(body).not.toContain("Tokenizer must contain");
    // The request's own log line names it, with the loader's words the client was not shown.
    expect(k.logs.filter((l) => l.msg === "request failed" && l.request_id === noTokenizer.headers.get("x-request-id"))).toEqual([
      expect.objectContaining({ model: NO_TOKENIZER, cause: "tokenizer_unavailable", detail: expect.stringContaining("Tokenizer must contain") }),
    ]);
    const noLoad = await k.req("/v1/messages", { method: "POST", json: { model: NO_LOAD, messages: [{ role: "user", content: "hi" }], max_tokens: 5 } });
    expect(noLoad.status).toBe(503);
    expectClean(await noLoad.text());
  });
});
