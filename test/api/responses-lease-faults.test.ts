// Background jobs on Postgres through the pauses longer than a lease that made kiln run its own jobs twice: the
// database stopped and started again, the kiln process stopped (SIGSTOP) and continued, and one of two replicas
// stopped while the other takes its jobs over. kiln runs as processes of its own (they must be stoppable); after each
// fault every job has one usage row, one terminal event, its last, no event lost, and a GET that agrees with it, and
// no replica took over a job of its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { dirname } from "node:path";
import { type ServerProcess, startServerProcess } from "../load/server-process.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startPostgres, type TestPostgres } from "../helpers/postgres-server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";

const JOBS = 20;
/** A shorter lease than the default 5 s, so that the test waits less; the faults are the same. */
const LEASE_MS = 2_000;
/** Longer than a lease, so that the lease runs out while kiln or its database is away. */
const PAUSE_MS = LEASE_MS + 1_000;

let pg: TestPostgres;
const kilns: ServerProcess[] = [];
const sqls: SQL[] = [];

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const s of sqls) await s.close({ timeout: 0 });
  for (const k of kilns) await k.kill9();
  await pg?.stop();
});

interface Figures {
  usageRows: number;
  takenOver: number;
  duplicateKeys: number;
  notOneTerminal: string[];
  terminalNotLast: string[];
  getDisagrees: string[];
  /** Responses whose stored events skip a sequence number (events lost while the database was away). */
  gaps: string[];
}

/** A kiln process on the database at `url` (`key`: the database's key, when another kiln made it). */
async function kilnOn(url: string, key?: string): Promise<ServerProcess> {
  const k = await startServerProcess({
    dataDir: tempDir("kiln-lease-faults-"), modelsDir: dirname(await tinyModelDir()), logLevel: "info", ...(key ? { key } : {}),
    env: { KILN_DATABASE_URL: url, KILN_THREADS: "1", KILN_LEASE_MS: String(LEASE_MS) },
  });
  kilns.push(k);
  return k;
}

/**
 * A kiln process on a fresh database (and `others` more replicas on it), and 20 background jobs created on the first;
 * resolves once some are running.
 */
async function startJobs(others = 0): Promise<{ ids: string[]; kiln: ServerProcess; replicas: ServerProcess[]; sql: SQL }> {
  const url = await pg.newDatabase();
  const k = await kilnOn(url);
  const replicas = await Promise.all(Array.from({ length: others }, () => kilnOn(url, k.key)));
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const res = await fetch(`${k.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${k.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "kiln-tiny-v1", input: `Hello ${i}`, temperature: 0, max_output_tokens: 200, background: true }),
    });
    expect(res.status).toBe(200);
    ids.push(((await res.json()) as { id: string }).id);
  }
  const s = new SQL(url, { max: 2 });
  sqls.push(s);
  await waitFor(async () => (await s`SELECT count(*)::int AS n FROM responses WHERE status = 'in_progress'`)[0].n as number, { what: "a job running", until: (n) => n > 0 });
  return { ids, kiln: k, replicas, sql: s };
}

/** How many stored responses a kiln's log says it took over. */
function takenOver(k: ServerProcess): number {
  let n = 0;
  for (const line of k.log().split("\n")) {
    if (!line.includes("stored responses taken over")) continue;
    const taken = JSON.parse(line) as { background_restarted: string[]; failed: string[] };
    n += taken.background_restarted.length + taken.failed.length;
  }
  return n;
}

/** Once every job has ended: what the database, GET and kiln's log say about them. */
async function figures(k: ServerProcess, s: SQL, ids: string[]): Promise<Figures> {
  await waitFor(async () => (await s`SELECT count(*)::int AS n FROM responses WHERE status IN ('queued', 'in_progress')`)[0].n as number, {
    what: "every job ended", until: (n) => n === 0, timeoutMs: 120_000, intervalMs: 200,
  });
  // Usage a job settled while the database was away is journaled, and replayed with the next settlement it takes.
  await fetch(`${k.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${k.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "kiln-tiny-v1", messages: [{ role: "user", content: "Hi" }], max_tokens: 2 }),
  });
  const usage = await waitFor(async () => (await s`SELECT count(*)::int AS n FROM usage WHERE endpoint = 'responses'`)[0].n as number, {
    what: `${JOBS} usage rows`, until: (n) => n >= JOBS, timeoutMs: 10_000, intervalMs: 100,
  }).catch(async () => (await s`SELECT count(*)::int AS n FROM usage WHERE endpoint = 'responses'`)[0].n as number);
  const out: Figures = { usageRows: usage, takenOver: 0, duplicateKeys: 0, notOneTerminal: [], terminalNotLast: [], getDisagrees: [], gaps: [] };
  for (const id of ids) {
    const events = (await s`SELECT sequence, event_json FROM response_events WHERE response_id = ${id} ORDER BY sequence`) as { sequence: number; event_json: string }[];
    const types = events.map((e) => (JSON.parse(e.event_json) as { type: string }).type);
    if (events.some((e, i) => Number(e.sequence) !== i)) out.gaps.push(`${id}: ${events.length} events, last ${events.at(-1)?.sequence}`);
    const terminal = types.filter((t) => ["response.completed", "response.incomplete", "response.failed"].includes(t));
    if (terminal.length !== 1) out.notOneTerminal.push(`${id}: ${terminal.join(",")}`);
    else if (types.at(-1) !== terminal[0]) out.terminalNotLast.push(`${id}: ${types.slice(-2).join(",")}`);
    const last = JSON.parse(events.at(-1)?.event_json ?? "{}") as { response?: { status?: string } };
    const got = (await (await fetch(`${k.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${k.key}` } })).json()) as { status: string };
    if (got.status !== last.response?.status) out.getDisagrees.push(`${id}: GET ${got.status}, stream ${last.response?.status}`);
  }
  const log = k.log();
  out.takenOver = takenOver(k);
  out.duplicateKeys = log.split("duplicate key value").length - 1;
  return out;
}

const clean: Figures = { usageRows: JOBS, takenOver: 0, duplicateKeys: 0, notOneTerminal: [], terminalNotLast: [], getDisagrees: [], gaps: [] };

describe("background jobs through a pause longer than a lease (Postgres)", () => {
  test("the database stopped, then started again: each job ran once, ended once, and GET agrees", async () => {
    const run = await startJobs();
    await pg.down();
    // The fault's length is what is tested: longer than a lease.
    await Bun.sleep(PAUSE_MS);
    await pg.up();
    const got = await figures(run.kiln, run.sql, run.ids);
    console.info("database away", PAUSE_MS, "ms:", JSON.stringify(got));
    expect(got).toEqual(clean);
    await run.kiln.kill9();
  }, 240_000);

  test("the kiln process stopped (SIGSTOP), then continued: each job ran once, ended once, and GET agrees", async () => {
    const run = await startJobs();
    process.kill(run.kiln.pid, "SIGSTOP");
    // The fault's length is what is tested: longer than a lease.
    await Bun.sleep(PAUSE_MS);
    process.kill(run.kiln.pid, "SIGCONT");
    const got = await figures(run.kiln, run.sql, run.ids);
    console.info("kiln stopped", PAUSE_MS, "ms:", JSON.stringify(got));
    expect(got).toEqual(clean);
  }, 240_000);

  test("one of two replicas stopped (SIGSTOP), then continued: the other took its jobs over, its own runs stopped, each job ended once", async () => {
    const run = await startJobs(1);
    const other = run.replicas[0]!;
    process.kill(run.kiln.pid, "SIGSTOP");
    // Past the lease, the other replica claims the stopped one's jobs; then the stopped one comes back.
    await waitFor(() => takenOver(other), { what: "the other replica taking the jobs over", until: (n) => n > 0, timeoutMs: 30_000, intervalMs: 100 });
    process.kill(run.kiln.pid, "SIGCONT");
    const got = await figures(run.kiln, run.sql, run.ids);
    console.info("one of two replicas stopped:", JSON.stringify({ ...got, takenOverByOther: takenOver(other) }));
    // The stopped replica took nothing over (its own jobs least of all), and its late writes were refused, not doubled.
    expect(got).toEqual(clean);
    expect(run.kiln.log()).toContain("stored response taken over by another replica; its run here stops");
  }, 240_000);
});
