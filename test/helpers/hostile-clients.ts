// Clients that misbehave on purpose, and meters for what they cost the server: RSS from /proc, status latency.
// Loopback only.
import { connect, type Socket } from "node:net";

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

/**
 * Opens `count` sockets that each send headers promising a body and then only part of it (or, with `partialHeaders`,
 * only part of the headers); counts those still open after `waitMs`.
 */
export async function halfSent(url: string, count: number, waitMs: number, opts: { key?: string; partialHeaders?: boolean } = {}): Promise<number> {
  const auth = opts.key ? `authorization: Bearer ${opts.key}\r\n` : "";
  const text = opts.partialHeaders
    ? "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\ncontent-ty"
    : `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${auth}content-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":`;
  const { hostname, port } = new URL(url);
  const socks: { s: Socket; open: boolean }[] = [];
  for (let i = 0; i < count; i++) {
    const s = connect(Number(port), hostname);
    const entry = { s, open: true };
    // Reading (and dropping) the answer lets the socket see the server's close; a paused socket never would.
    s.on("data", () => {});
    s.on("close", () => (entry.open = false));
    s.on("error", () => (entry.open = false));
    s.on("connect", () => s.write(text));
    socks.push(entry);
  }
  await Bun.sleep(waitMs);
  const open = socks.filter((e) => e.open).length;
  for (const e of socks) e.s.destroy();
  return open;
}

/** The poller run in its own process, so the test process's own pauses (GC, building bodies) are not counted. */
const POLLER = `
const url = process.argv[process.argv.length - 1];
let worst = 0, polls = 0, running = true;
process.stdin.on("data", () => { running = false; });
while (running) {
  const t0 = performance.now();
  await (await fetch(url + "/v1/status")).arrayBuffer();
  // The first poll (this process's own start-up) only says the poller is ready.
  if (++polls === 1) console.log("ready");
  else worst = Math.max(worst, performance.now() - t0);
  await Bun.sleep(10);
}
console.log(JSON.stringify({ worst, polls }));
process.exit(0);
`;

/** Like statusLatency, with the polling done by a separate process. */
export async function statusLatencyApart<T>(url: string, work: () => Promise<T>): Promise<{ result: T; worstMs: number; polls: number }> {
  const proc = Bun.spawn([process.execPath, "-e", POLLER, url], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  while (!out.includes("ready\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`status poller exited early: ${out}`);
    out += decoder.decode(value, { stream: true });
  }
  await Bun.sleep(30);
  const result = await work();
  await Bun.sleep(30);
  proc.stdin.write("stop\n");
  await proc.stdin.end();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out += decoder.decode(r.value, { stream: true });
  await proc.exited;
  const { worst, polls } = JSON.parse(out.trim().split("\n").pop()!) as { worst: number; polls: number };
  return { result, worstMs: worst, polls };
}
