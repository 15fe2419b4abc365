// Runs kiln as a separate process for load scenarios (so clients and server do not share an event loop).
import { join } from "node:path";

export interface ServerProcess {
  url: string;
  key: string;
  pid: number;
  /** Peak resident memory of the server process so far (VmHWM), in MB. */
  peakRssMb(): Promise<number>;
  /** Its resident memory now (VmRSS), in MB. */
  rssMb(): Promise<number>;
  /** SIGTERM; resolves to the exit code. */
  stop(): Promise<number>;
  /** SIGKILL: no drain, no cleanup. */
  kill9(): Promise<number>;
  /** The server's log so far (its standard error). */
  log(): string;
}

/** A memory figure of a process's /proc status, in MB. */
async function statusMb(pid: number, field: "VmHWM" | "VmRSS"): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text();
  return Number(status.match(new RegExp(`${field}:\\s+(\\d+)`))?.[1] ?? 0) / 1024;
}

/** `key`: the data dir's key when it was made by an earlier start (only the first start prints one). */
/** `echo: false` keeps the server's log to `log()` instead of passing it on to this process's standard error. */
export async function startServerProcess(opts: { dataDir: string; modelsDir: string; env?: Record<string, string>; key?: string; logLevel?: string; echo?: boolean }): Promise<ServerProcess> {
  const root = join(import.meta.dir, "..", "..");
  const proc = Bun.spawn([process.execPath, join(root, "src", "main.ts"), "serve", "--port", "0", "--data-dir", opts.dataDir, "--models-dir", opts.modelsDir, "--log-level", opts.logLevel ?? "warn"], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    // Only the text default is built in beside what the scenario serves (the models dir may be the tests' shared cache).
    env: { ...process.env, KILN_BUILTIN_MODELS: "kiln-tiny-v1", ...opts.env },
  });
  const decoder = new TextDecoder();
  let out = "";
  // The log is kept (and passed on, as the terminal would have shown it).
  let log = "";
  void (async () => {
    const errDecoder = new TextDecoder();
    for await (const chunk of proc.stderr) {
      const text = errDecoder.decode(chunk, { stream: true });
      log += text;
      if (opts.echo !== false) process.stderr.write(text);
    }
  })();
  const reader = proc.stdout.getReader();
  const deadline = Date.now() + 180_000;
  let url = "";
  let key = opts.key ?? "";
  while (!url && Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    out += decoder.decode(value, { stream: true });
    key ||= out.match(/LLM\|\d+\|[A-Za-z0-9]+/)?.[0] ?? "";
    url = out.match(/listening on (http:\/\/\S+?) /)?.[1] ?? "";
  }
  if (!url || !key) {
    proc.kill();
    throw new Error(`kiln did not start:\n${out}`);
  }
  void (async () => {
    while (!(await reader.read()).done);
  })();
  return {
    url,
    key,
    pid: proc.pid,
    peakRssMb: () => statusMb(proc.pid, "VmHWM"),
    rssMb: () => statusMb(proc.pid, "VmRSS"),
    async stop() {
      proc.kill("SIGTERM");
      return proc.exited;
    },
    log: () => log,
    async kill9() {
      proc.kill("SIGKILL");
      return proc.exited;
    },
  };
}
