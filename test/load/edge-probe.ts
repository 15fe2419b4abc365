// Probes kiln's edge as a hostile client would and prints figures: `bun test/load/edge-probe.ts`.
// 1: an unauthenticated 512 MiB chunked upload (status, server RSS growth); 2: a 20 MB prompt and 100,000 nested
// `[` with a key (time to answer, worst /v1/status latency meanwhile); 6: 300 half-sent requests (still open after 15 s).
import { connect, type Socket } from "node:net";
import { dirname } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { startServerProcess, type ServerProcess } from "./server-process.ts";

const MiB = 1024 * 1024;

export async function rssMb(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
}

/** Samples the server's RSS every 20 ms while `work` runs; returns the work's result and the peak growth in MB. */
export async function rssGrowth<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; baseMb: number; growthMb: number }> {
  const baseMb = await rssMb(pid);
  let peak = baseMb;
  let running = true;
  const sampler = (async () => {
    while (running) {
      peak = Math.max(peak, await rssMb(pid));
      await Bun.sleep(20);
    }
  })();
  const result = await work();
  running = false;
  await sampler;
  peak = Math.max(peak, await rssMb(pid));
  return { result, baseMb, growthMb: peak - baseMb };
}

/** Sends `total` bytes as a chunked POST body over a raw socket; resolves with the status line, or "closed". */
export function chunkedUpload(url: string, path: string, total: number, headers: Record<string, string> = {}): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const sock = connect(Number(port), hostname);
    let answer = "";
    let sent = 0;
    const chunk = Buffer.alloc(MiB, 0x61);
    const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
    const done = (s: string) => {
      sock.destroy();
      resolve(s);
    };
    const pump = () => {
      while (sent < total) {
        sent += chunk.length;
        if (!sock.write(frame)) return void sock.once("drain", pump);
      }
      sock.write("0\r\n\r\n");
    };
    sock.on("connect", () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("");
      sock.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n${extra}\r\n`);
      pump();
    });
    sock.on("data", (d) => {
      answer += d.toString("latin1");
      if (answer.includes("\r\n")) done(answer.slice(0, answer.indexOf("\r\n")));
    });
    sock.on("error", () => done(answer.split("\r\n")[0] || "closed"));
    sock.on("close", () => done(answer.split("\r\n")[0] || "closed"));
  });
}

/** Polls /v1/status every 10 ms while `work` runs; returns the work's result and the slowest status answer. */
export async function statusLatency<T>(url: string, work: () => Promise<T>): Promise<{ result: T; worstMs: number; polls: number }> {
  let worst = 0;
  let polls = 0;
  let running = true;
  const poller = (async () => {
    while (running) {
      const t0 = performance.now();
      await (await fetch(`${url}/v1/status`)).arrayBuffer();
      worst = Math.max(worst, performance.now() - t0);
      polls++;
      await Bun.sleep(10);
    }
  })();
  await Bun.sleep(50);
  const result = await work();
  running = false;
  await poller;
  return { result, worstMs: worst, polls };
}

async function timed(url: string, key: string, body: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body,
  });
  await res.arrayBuffer();
  return { status: res.status, ms: Math.round(performance.now() - t0) };
}

/** Opens `count` sockets that each send headers promising a body and then only part of it; counts those still open after `waitMs`. */
async function halfSent(url: string, count: number, waitMs: number): Promise<number> {
  const { hostname, port } = new URL(url);
  const socks: { s: Socket; open: boolean }[] = [];
  for (let i = 0; i < count; i++) {
    const s = connect(Number(port), hostname);
    const entry = { s, open: true };
    s.on("close", () => (entry.open = false));
    s.on("error", () => (entry.open = false));
    s.on("connect", () => s.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":`));
    socks.push(entry);
  }
  await Bun.sleep(waitMs);
  const open = socks.filter((e) => e.open).length;
  for (const e of socks) e.s.destroy();
  return open;
}

async function main() {
  const modelDir = await tinyModelDir();
  const server: ServerProcess = await startServerProcess({ dataDir: tempDir(), modelsDir: dirname(modelDir) });
  try {
    const unauth = await rssGrowth(server.pid, () => chunkedUpload(server.url, "/v1/chat/completions", 512 * MiB));
    console.log(`item 1: 512 MiB unauthenticated chunked upload → ${unauth.result}; RSS ${unauth.baseMb.toFixed(0)} MB, grew ${unauth.growthMb.toFixed(1)} MB`);
    const model = JSON.parse(await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).text()).data[0].id;
    const huge = JSON.stringify({ model, messages: [{ role: "user", content: "word ".repeat(4 * MiB) }] });
    const big = await statusLatency(server.url, () => timed(server.url, server.key, huge));
    console.log(`item 2: ${(huge.length / MiB).toFixed(0)} MB prompt → ${big.result.status} in ${big.result.ms} ms; worst /v1/status ${big.worstMs.toFixed(1)} ms over ${big.polls} polls`);
    const deep = await statusLatency(server.url, () => timed(server.url, server.key, "[".repeat(100_000) + "]".repeat(100_000)));
    console.log(`item 2: 100,000 nested [ ] → ${deep.result.status} in ${deep.result.ms} ms; worst /v1/status ${deep.worstMs.toFixed(1)} ms`);
    const open = await halfSent(server.url, 300, 15_000);
    console.log(`item 6: 300 half-sent unauthenticated requests → ${open} still open after 15 s`);
  } finally {
    console.log(`server exit code ${await server.stop()}`);
  }
}

if (import.meta.main) await main();
