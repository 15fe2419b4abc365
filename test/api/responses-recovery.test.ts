// Durability of background responses: kiln runs as a real process, a batch of background jobs is acknowledged (some
// running, some waiting in the queue), the process is killed with SIGKILL, and a new process on the same data dir
// must bring every acknowledged job to a terminal status: the queued ones run again from their stored input, the
// running ones end failed with a retryable server_error (their partial output had already been streamed).
import { describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

const TERMINAL = ["completed", "incomplete", "failed", "cancelled"];

async function call(server: ServerProcess, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  expect(res.status).toBe(200);
  return res.json();
}

async function events(server: ServerProcess, id: string): Promise<any[]> {
  const res = await fetch(`${server.url}/v1/responses/${id}?stream=true`, { headers: { authorization: `Bearer ${server.key}` } });
  expect(res.status).toBe(200);
  const text = await res.text();
  return text.trim().split("\n\n").map((f) => JSON.parse(f.split("\n").find((l) => l.startsWith("data: "))!.slice(6)));
}

describe("background responses survive kill -9", () => {
  test("every acknowledged job reaches a terminal status after a restart; none is lost or stuck", async () => {
    const dataDir = tempDir();
    const modelsDir = dirname(await tinyModelDir());
    const env = { KILN_THREADS: "1" };
    const first = await startServerProcess({ dataDir, modelsDir, env });
    const model = ((await call(first, "GET", "/v1/models")).data[0] as { id: string }).id;

    // The tiny model's batch holds 16 sequences: a stored stream and 15 long jobs fill it, so the 4 short ones after
    // them wait queued.
    const streamed = await fetch(`${first.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${first.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, input: "Hello", temperature: 0, max_output_tokens: 3000, stream: true }),
    });
    const reader = streamed.body!.getReader();
    let head = "";
    while (!head.includes("\n\n")) head += new TextDecoder().decode((await reader.read()).value);
    const streamId = JSON.parse(head.split("\n")[1]!.slice(6)).response.id as string;
    const long: string[] = [];
    for (let i = 0; i < 15; i++) long.push((await call(first, "POST", "/v1/responses", { model, input: "Hello", temperature: 0, max_output_tokens: 3000, background: true })).id);
    const short: string[] = [];
    for (let i = 0; i < 4; i++) short.push((await call(first, "POST", "/v1/responses", { model, input: `Say ${i}`, max_output_tokens: 16, background: true })).id);

    const deadline = Date.now() + 60_000;
    for (;;) {
      const states = await Promise.all([...long, ...short].map(async (id) => (await call(first, "GET", `/v1/responses/${id}`)).status as string));
      if (states.slice(0, 15).every((s) => s === "in_progress")) {
        expect(states.slice(15)).toEqual(["queued", "queued", "queued", "queued"]);
        break;
      }
      if (Date.now() > deadline) throw new Error(`jobs never all started: ${states.join(",")}`);
      await Bun.sleep(50);
    }
    await Bun.sleep(300);
    await first.kill9();

    const t0 = performance.now();
    const second = await startServerProcess({ dataDir, modelsDir, env, key: first.key });
    const started = performance.now() - t0;
    const final = new Map<string, any>();
    for (const until = Date.now() + 120_000; final.size < 20 && Date.now() < until; await Bun.sleep(50)) {
      for (const id of [...long, ...short, streamId]) {
        if (final.has(id)) continue;
        const r = await call(second, "GET", `/v1/responses/${id}`);
        if (TERMINAL.includes(r.status)) final.set(id, r);
      }
    }
    const recovered = performance.now() - t0;
    console.log(`recovery after kill -9: restart ${Math.round(started)} ms, all 20 responses terminal after ${Math.round(recovered)} ms`);
    expect(final.size).toBe(20);

    for (const id of [...long, streamId]) {
      const r = final.get(id);
      expect(r.status).toBe("failed");
      expect(r.error).toEqual({ code: "server_error", message: expect.stringContaining("restarted") });
      const log = await events(second, id);
      expect(log.map((e) => e.sequence_number)).toEqual(log.map((_, i) => i));
      expect(log.at(-1).type).toBe("response.failed");
    }
    for (const id of short) {
      const r = final.get(id);
      expect(["completed", "incomplete"]).toContain(r.status);
      expect(r.usage.output_tokens).toBeGreaterThan(0);
      const log = await events(second, id);
      expect(log.map((e) => e.sequence_number)).toEqual(log.map((_, i) => i));
      expect(log.slice(0, 3).map((e) => e.type)).toEqual(["response.created", "response.queued", "response.in_progress"]);
      expect(log.at(-1).response).toEqual(r);
    }
    expect(await second.stop()).toBe(0);
  }, 300_000);

  test("SIGTERM: a running job gets the grace period, its followers hear server_shutting_down, and the next start settles it", async () => {
    const dataDir = tempDir();
    const modelsDir = dirname(await tinyModelDir());
    const env = { KILN_THREADS: "1", KILN_SHUTDOWN_GRACE_MS: "300" };
    const first = await startServerProcess({ dataDir, modelsDir, env });
    const model = ((await call(first, "GET", "/v1/models")).data[0] as { id: string }).id;
    const job = await call(first, "POST", "/v1/responses", { model, input: "Hello", temperature: 0, max_output_tokens: 3000, background: true });
    const follower = await fetch(`${first.url}/v1/responses/${job.id}?stream=true`, { headers: { authorization: `Bearer ${first.key}` } });
    const reading = follower.text();
    await waitFor(async () => (await call(first, "GET", `/v1/responses/${job.id}`)).status, { what: `${job.id} in progress`, until: (s) => s === "in_progress" });
    const t0 = performance.now();
    expect(await first.stop()).toBe(0);
    expect(performance.now() - t0).toBeLessThan(300 + 1000 + 500);
    const frames = (await reading).trim().split("\n\n");
    expect(frames.at(-1)).toContain('"code":"server_shutting_down"');

    const second = await startServerProcess({ dataDir, modelsDir, env, key: first.key });
    const r = await call(second, "GET", `/v1/responses/${job.id}`);
    expect(r.status).toBe("failed");
    expect(r.error.code).toBe("server_error");
    // The follower that reconnects after the last event it saw gets the ending.
    const last = JSON.parse(frames.at(-1)!.split("\n").find((l) => l.startsWith("data: "))!.slice(6));
    const rest = await (await fetch(`${second.url}/v1/responses/${job.id}?stream=true&starting_after=${last.sequence_number}`, { headers: { authorization: `Bearer ${second.key}` } })).text();
    expect(rest).toContain("event: response.failed");
    // A replay from the start passes over the interruption and ends with the failure too.
    const whole = await events(second, job.id);
    expect(whole.map((e) => e.type)).not.toContain("error");
    expect(whole.at(-1).type).toBe("response.failed");
    expect(await second.stop()).toBe(0);
  }, 300_000);
});
