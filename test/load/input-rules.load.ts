// `npm run bench -- --input-rules`: GET /v1/status latency (p50, p99, max) while 4 MiB Responses bodies of alternating
// reasoning and assistant items are checked, against the same server idle. One body breaks rule 2 only at its last
// item (the whole input is checked, then refused); the other is valid and is counted by /v1/responses/input_tokens
// (the rules, the stored-reasoning lookup of every id and the prompt's render, then refused for the context window).
import { expect, test } from "bun:test";
import { loadavg } from "node:os";
import { dirname } from "node:path";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { markdownTable, percentile } from "./metrics.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";

const BODY_BYTES = 4 * 1024 * 1024;
const REQUESTS = Number(process.env.KILN_BENCH_INPUT_RULES_REQUESTS ?? 8);
/** Status polls for the idle baseline. */
const IDLE_POLLS = 200;

/** A ~4 MiB input: a user message, then reasoning and assistant items in turn; `tail` is appended as it is. */
function body(model: string, tail: unknown[]): Uint8Array {
  const filler = "The traveller weighs the museums of Rome against a day by the sea.";
  const input: unknown[] = [{ role: "user", content: "Plan a trip" }];
  let bytes = 0;
  for (let k = 0; bytes < BODY_BYTES - 4096; k++) {
    const pair = [{ type: "reasoning", id: `rs_${k}`, summary: [{ type: "summary_text", text: filler }] }, { role: "assistant", content: filler }];
    bytes += JSON.stringify(pair).length;
    input.push(...pair);
  }
  return new TextEncoder().encode(JSON.stringify({ model, input: [...input, ...tail] }));
}

/** Polls /v1/status every 5 ms until `work` settles (without work: IDLE_POLLS times); returns every latency. */
async function statusLatencies(server: ServerProcess, work: (() => Promise<number[]>) | null): Promise<{ latencies: number[]; work: number[] }> {
  const latencies: number[] = [];
  let running = true;
  const poller = (async () => {
    while (running && (work || latencies.length < IDLE_POLLS)) {
      const t0 = performance.now();
      await (await fetch(`${server.url}/v1/status`)).arrayBuffer();
      latencies.push(performance.now() - t0);
      await Bun.sleep(5);
    }
  })();
  const done = work ? await work() : await poller.then(() => []);
  running = false;
  await poller;
  return { latencies, work: done };
}

/** Sends the body REQUESTS times, one after another; each must get `status`; returns each request's ms. */
function validations(server: ServerProcess, path: string, bytes: Uint8Array, status: number): () => Promise<number[]> {
  return async () => {
    const ms: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: bytes });
      const answer = (await res.json()) as { error?: { message: string } };
      expect([res.status, answer.error?.message ?? ""]).toEqual([status, expect.any(String)]);
      ms.push(performance.now() - t0);
    }
    return ms;
  };
}

test(
  "/v1/status stays fast while 4 MiB inputs are checked",
  async () => {
    const server = await startServerProcess({ dataDir: tempDir("kiln-bench-rules-"), modelsDir: dirname(await tinyModelDir()), env: { KILN_MAX_BODY_BYTES: String(2 * BODY_BYTES) } });
    try {
      const model = ((await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { data: { id: string }[] }).data[0]!.id;
      // Rule 2 fails only at the very end: a reasoning item with nothing after it.
      const broken = body(model, [{ type: "reasoning", id: "rs_last", summary: [] }]);
      const valid = body(model, [{ role: "user", content: "And then?" }]);
      const items = (JSON.parse(new TextDecoder().decode(valid)) as { input: unknown[] }).input.length;
      const idle = await statusLatencies(server, null);
      const rules = await statusLatencies(server, validations(server, "/v1/responses", broken, 400));
      const counted = await statusLatencies(server, validations(server, "/v1/responses/input_tokens", valid, 400));

      const f = (v: number) => v.toFixed(1);
      const row = (label: string, r: { latencies: number[]; work: number[] }) => [
        label, String(r.latencies.length), f(percentile(r.latencies, 50)), f(percentile(r.latencies, 99)), f(Math.max(...r.latencies)), r.work.length ? f(percentile(r.work, 50)) : "-",
      ];
      console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
      console.log(`bodies of ${(broken.length / 1048576).toFixed(2)} MiB, ${items} items (reasoning and assistant in turn), ${REQUESTS} requests one after another, load ${loadavg()[0]!.toFixed(2)}\n`);
      console.log(markdownTable(["server busy with", "status polls", "p50 ms", "p99 ms", "max ms", "request p50 ms"], [
        row("nothing (idle)", idle),
        row("POST /v1/responses, rule 2 broken at the end", rules),
        row("POST /v1/responses/input_tokens, valid", counted),
      ]));
    } finally {
      expect(await server.stop()).toBe(0);
    }
  },
  3_600_000,
);
