// A real Postgres for tests: initdb into a temp dir, 127.0.0.1 on a free port, fsync off; as the postgres user when root.
import { SQL, type Subprocess } from "bun";
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { findBinary, SERVERS } from "../../build/setup-cluster.mjs";
import { tempDir } from "./kiln.ts";
import { waitFor } from "./wait-for.ts";

export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres: the superuser on the default database. */
  readonly url: string;
  readonly port: number;
  /** The directory of the unix socket (inside the server's temp dir). */
  readonly socketDir: string;
  /**
   * Creates a fresh database and returns its URL, so tests sharing one server do not share data: empty, or a copy of
   * `template` (a database of this server nobody is connected to).
   */
  newDatabase(template?: string): Promise<string>;
  /** Shuts the server down and keeps its data (fault injection: clients are refused until `up`). */
  down(): Promise<void>;
  /** Starts the server stopped by `down` again, on the same port and data, once it answers. */
  up(): Promise<void>;
  /** Shuts the server down (fast: open sessions are ended) and removes its directory. */
  stop(): Promise<void>;
}

const running = new Set<Subprocess>();
// A test process that dies without its afterAll still takes its servers with it.
process.on("exit", () => {
  for (const p of running) p.kill("SIGKILL");
});

/** The uid and gid of `user` in a passwd file's text, or null. Pure. */
export function passwdIds(passwd: string, user: string): { uid: number; gid: number } | null {
  for (const line of passwd.split("\n")) {
    const f = line.split(":");
    if (f[0] === user && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  return null;
}

/** Who runs initdb and postgres: both refuse root, so as root Debian's `postgres` user; otherwise the current user. */
function serverUser(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const ids = passwdIds(readFileSync("/etc/passwd", "utf8"), "postgres");
  if (!ids) throw new Error("the tests run as root and there is no `postgres` user to run Postgres as: run `node build/setup.mjs --cluster`");
  return ids;
}

function binDir(): string {
  const postgres = findBinary(SERVERS.find((s) => s.binary === "postgres")!);
  // The suite's pretest installs it, so a missing one is a failure, not a skip.
  if (!postgres) throw new Error("postgres is not installed: run `node build/setup.mjs --cluster` (npm test's pretest does)");
  return dirname(postgres);
}

function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

function lastLog(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8").trim().split("\n").slice(-3).join(" | ") : "no log";
}

async function answers(url: string): Promise<boolean> {
  const client = new SQL(url, { max: 1, connectionTimeout: 2, idleTimeout: 1 });
  try {
    await client`SELECT 1`;
    return true;
  } catch {
    return false;
  } finally {
    await client.close({ timeout: 0 });
  }
}

async function initdb(bin: string, data: string, cwd: string, as: { uid: number; gid: number } | null): Promise<void> {
  // trust on loopback and the socket only; C locale and UTF-8 so every box sorts and encodes alike.
  const args = [join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"];
  const proc = Bun.spawn(args, { cwd, stdout: "pipe", stderr: "pipe", ...(as ?? {}) });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`initdb failed (exit ${code}): ${(err || out).trim().split("\n").slice(-3).join(" | ")}`);
}

function spawnPostgres(bin: string, data: string, port: number, socketDir: string, log: string, as: { uid: number; gid: number } | null): Subprocess {
  const settings = {
    listen_addresses: "127.0.0.1",
    port: String(port),
    unix_socket_directories: socketDir,
    // A test database is thrown away: durability only costs time.
    fsync: "off",
    synchronous_commit: "off",
    full_page_writes: "off",
    // Several test files may run a server each on a shared 2-core box: keep each small.
    shared_buffers: "16MB",
    max_connections: "100",
  };
  const args = [join(bin, "postgres"), "-D", data, ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])];
  const proc = Bun.spawn(args, { cwd: dirname(data), stdout: "ignore", stderr: Bun.file(log), ...(as ?? {}) });
  running.add(proc);
  void proc.exited.then(() => running.delete(proc));
  return proc;
}

export async function startPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  const as = serverUser();
  const dir = tempDir("kiln-pg-");
  const data = join(dir, "data");
  const socketDir = join(dir, "sock");
  mkdirSync(socketDir);
  if (as) for (const d of [dir, socketDir]) chownSync(d, as.uid, as.gid);
  await initdb(bin, data, dir, as);

  let proc: Subprocess | null = null;
  let port = 0;
  let starts = 0;
  let lastFailure = "";
  const launch = async (): Promise<Subprocess | null> => {
    const log = join(dir, `postgres-${starts++}.log`);
    const p = spawnPostgres(bin, data, port, socketDir, log, as);
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await waitFor(async () => p.exitCode !== null || (await answers(url)), { what: `postgres on port ${port} to accept a connection`, timeoutMs: 60_000 });
    if (p.exitCode === null) return p;
    lastFailure = lastLog(log);
    return null;
  };
  // The free port may be taken between the probe and the server's bind: another port then.
  for (let attempt = 0; attempt < 5 && !proc; attempt++) {
    port = freePort();
    proc = await launch();
  }
  if (!proc) throw new Error(`postgres did not start: ${lastFailure}`);

  const shutDown = async () => {
    const p = proc;
    proc = null;
    if (!p) return;
    // SIGINT is Postgres's fast shutdown: sessions are ended, no checkpoint wait beyond a small one.
    p.kill("SIGINT");
    try {
      await waitFor(() => p.exitCode !== null || p.signalCode !== null, { what: `postgres on port ${port} to shut down`, timeoutMs: 30_000 });
    } catch {
      p.kill("SIGKILL");
    }
    await p.exited;
  };
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let made = 0;
  return {
    url,
    port,
    socketDir,
    async newDatabase(template) {
      const name = `kiln_${++made}`;
      const admin = new SQL(url, { max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ""}`);
      } finally {
        await admin.close();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    down: shutDown,
    async up() {
      if (proc) return;
      proc = await launch();
      if (!proc) throw new Error(`postgres did not start again on port ${port}: ${lastFailure}`);
    },
    async stop() {
      await shutDown();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
