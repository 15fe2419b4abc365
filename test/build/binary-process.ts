// Runs the compiled executable the way an operator would: alone in a folder, with an empty environment.
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Mesa's shader cache for the suite's webgpu runs of the binary, each in a fresh home: the first run compiles the
 * shaders (tens of seconds on a software driver), the others find them, as a second start on a real box would.
 */
export const SHARED_SHADER_CACHE = { XDG_CACHE_HOME: join(tmpdir(), "kiln-test-shader-cache") };

export interface RunningBinary {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves once both stdout and stderr have been read to their end (the process closed them). */
  drained: Promise<void>;
  /** Resolves with the first match of `re` in the output; rejects after `timeoutMs` or if the process exits. */
  waitFor(re: RegExp, timeoutMs: number): Promise<RegExpMatchArray>;
}

/** A port nothing listens on right now (the OS picks it; released before kiln binds it). */
export function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

/** `env -i PATH=/usr/bin:/bin HOME=<home> ./kiln <args>`: no Bun on PATH, no node_modules, no inherited variables. */
export function runBinary(dir: string, args: string[], home: string, input?: string): RunningBinary {
  const proc = Bun.spawn(["env", "-i", "PATH=/usr/bin:/bin", `HOME=${home}`, "./kiln", ...args], {
    cwd: dir,
    stdin: input === undefined ? "ignore" : new Blob([input]),
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  };
  const drained = Promise.all([pump(proc.stdout), pump(proc.stderr)]).then(() => {});
  return {
    proc,
    output: () => text,
    drained,
    async waitFor(re, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const m = text.match(re);
        if (m) return m;
        if (proc.exitCode !== null) throw new Error(`kiln exited (${proc.exitCode}) before printing ${re}:\n${text}`);
        await Bun.sleep(25);
      }
      throw new Error(`kiln did not print ${re} within ${timeoutMs} ms:\n${text}`);
    },
  };
}

/** Polls `url` until it answers 200; returns the milliseconds it took. */
export async function waitForHttp(url: string, timeoutMs: number, alive: () => boolean): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if (!alive()) throw new Error("kiln exited while starting");
    try {
      if ((await fetch(url)).status === 200) return performance.now() - started;
    } catch {
      // Not listening yet.
    }
    await Bun.sleep(20);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

/** Resident set size of a process in bytes (Linux /proc). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(status.match(/^VmRSS:\s+(\d+) kB/m)?.[1] ?? NaN);
  return kb * 1024;
}

/** Runs the binary to completion (for one-shot commands such as doctor and --version). */
export async function runOnce(dir: string, args: string[], home: string, timeoutMs = 60_000, input?: string): Promise<{ code: number; out: string }> {
  const run = runBinary(dir, args, home, input);
  const timer = setTimeout(() => run.proc.kill("SIGKILL"), timeoutMs);
  const code = await run.proc.exited;
  clearTimeout(timer);
  // Exit can be seen before the last output is read.
  await run.drained;
  return { code, out: run.output() };
}
