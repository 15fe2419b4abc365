// A real redis-server for tests: 127.0.0.1, a free port, no persistence, a temp dir; killed and restarted on demand, stopped at the end.
import { afterAll, beforeAll } from "bun:test";
import { RedisClient, type Subprocess } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./kiln.ts";
import { waitFor } from "./wait-for.ts";

export interface TestRedis {
  /** redis://127.0.0.1:<port> */
  readonly url: string;
  readonly port: number;
  /** A new client of this server (a replica has its own connection); closed by `stop`. */
  client(): Promise<RedisClient>;
  /** SIGKILL, as a crash or a cut cable would look: clients see their connection fail. */
  kill(): Promise<void>;
  /** Starts the server again on the same port (empty: nothing was persisted). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

const running = new Set<Subprocess>();
// A test process that dies without its afterAll still takes its servers with it.
process.on("exit", () => {
  for (const p of running) p.kill("SIGKILL");
});

function redisBinary(): string {
  const found = Bun.which("redis-server") ?? (existsSync("/usr/bin/redis-server") ? "/usr/bin/redis-server" : null);
  // The suite's pretest installs it, so a missing one is a failure, not a skip.
  if (!found) throw new Error("redis-server is not installed: run `node build/setup.mjs --cluster` (npm test's pretest does)");
  return found;
}

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

async function answersPing(port: number): Promise<boolean> {
  const c = new RedisClient(`redis://127.0.0.1:${port}`, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: 1000 });
  try {
    await c.connect();
    return (await c.send("PING", [])) === "PONG";
  } catch {
    return false;
  } finally {
    c.close();
  }
}

function spawnRedis(binary: string, port: number, dir: string): Subprocess {
  const proc = Bun.spawn([binary, "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir, "--logfile", join(dir, "redis.log")], {
    stdout: "ignore",
    stderr: "ignore",
  });
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  return proc;
}

function lastLog(dir: string): string {
  const path = join(dir, "redis.log");
  return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n").slice(-3).join(" | ") : "no log";
}

/** Waits until the server answers PING; false when it exited first (its port was taken meanwhile). */
async function ready(proc: Subprocess, port: number): Promise<boolean> {
  await waitFor(async () => proc.exitCode !== null || (await answersPing(port)), { what: `redis-server on port ${port} to answer PING`, timeoutMs: 20_000 });
  return proc.exitCode === null;
}

export async function startRedis(): Promise<TestRedis> {
  const binary = redisBinary();
  const dir = tempDir("kiln-redis-");
  let port = 0;
  let proc: Subprocess | null = null;
  // The free port may be taken between the probe and redis-server's bind: another port then.
  for (let attempt = 0; attempt < 5 && !proc; attempt++) {
    port = freePort();
    const p = spawnRedis(binary, port, dir);
    if (await ready(p, port)) proc = p;
    else if (attempt === 4) throw new Error(`redis-server did not start: ${lastLog(dir)}`);
  }
  const clients: RedisClient[] = [];
  const url = `redis://127.0.0.1:${port}`;
  const kill = async () => {
    if (!proc) return;
    proc.kill("SIGKILL");
    await proc.exited;
    proc = null;
  };
  return {
    url,
    port,
    async client() {
      const c = new RedisClient(url, { enableOfflineQueue: false, autoReconnect: false });
      await c.connect();
      clients.push(c);
      return c;
    },
    kill,
    async restart() {
      await kill();
      const p = spawnRedis(binary, port, dir);
      if (!(await ready(p, port))) throw new Error(`redis-server could not bind port ${port} again: ${lastLog(dir)}`);
      proc = p;
    },
    async stop() {
      for (const c of clients.splice(0)) c.close();
      await kill();
    },
  };
}

/**
 * One redis-server for a whole test file, started before its tests and stopped after them, with the connections
 * its tests open (`track`) closed first. `redis` is the server once started.
 */
export function redisPerFile(): { readonly redis: TestRedis; track(...opened: { close(): void }[]): void } {
  let server: TestRedis | undefined;
  const opened: { close(): void }[] = [];
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    for (const o of opened.splice(0)) o.close();
    await server?.stop();
  });
  return {
    get redis() {
      if (!server) throw new Error("redis-server is not started yet (use it inside a test or hook)");
      return server;
    },
    track: (...o) => void opened.push(...o),
  };
}
