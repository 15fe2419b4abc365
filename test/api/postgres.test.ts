// kiln on Postgres (KILN_DATABASE_URL), end to end: a real server and the real CLI against the test Postgres. The first
// start makes its team and key there; a team and key made with the CLI serve a chat completion whose usage row lands
// in Postgres; a stored Responses request and its stream replay come back from it; a file's row is there and its
// bytes in this replica's data dir. Nothing goes to SQLite.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tempDir } from "../helpers/kiln.ts";
import { freshPostgresDatabase } from "../helpers/shared-postgres.ts";
import { waitFor } from "../helpers/wait-for.ts";

const root = join(import.meta.dir, "..", "..");
let url: string;
let server: TestServer;
let pg: SQL;

beforeAll(async () => {
  url = await freshPostgresDatabase();
  server = await startTestServer({ KILN_DATABASE_URL: url });
  pg = new SQL(url, { max: 1 });
});
afterAll(async () => {
  await server?.stop(1000);
  await pg?.close();
});

/** `kiln <args>` as an operator runs it on another box: its own data dir, the same database URL (or `databaseUrl`). */
async function kiln(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  return kilnAt(url, ...args);
}

async function kilnAt(databaseUrl: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([process.execPath, join(root, "src", "main.ts"), ...args], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, KILN_DATABASE_URL: databaseUrl, KILN_BUILTIN_MODELS: "none", KILN_DATA_DIR: tempDir("kiln-cli-"), KILN_LOG_LEVEL: "error" },
  });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, out, err };
}

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 });

describe("kiln with KILN_DATABASE_URL", () => {
  test("the first start made its team and first key in Postgres, logged where, and left no SQLite file", async () => {
    expect(await pg`SELECT t.name AS team, k.name AS key FROM teams t JOIN api_keys k ON k.team_id = t.id`).toEqual([{ team: "default", key: "first key" }]);
    expect(server.logs.find((l) => l.msg === "database")).toMatchObject({ database: "postgres", host: new URL(url).host, name: new URL(url).pathname.slice(1) });
    expect(existsSync(join(server.deps.config.dataDir, "kiln.db"))).toBe(false);
    expect((await client(server.key).models.list()).data.map((m) => m.id)).toContain(server.modelId);
  });

  test("a team and key made with the CLI make a chat completion; its usage row is in Postgres, and `kiln usage` reads it", async () => {
    expect(await kiln("teams", "create", "acme")).toMatchObject({ code: 0 });
    const created = await kiln("keys", "create", "--team", "acme", "--name", "ci");
    expect(created.code).toBe(0);
    const key = created.out.match(/LLM\|\d+\|[A-Za-z0-9]+/)![0];
    const { data, response } = await client(key).chat.completions.create({ model: server.modelId, messages: [{ role: "user", content: "Hello" }], max_tokens: 6 }).withResponse();
    const requestId = response.headers.get("x-request-id")!;
    const [row] = await waitFor(
      async () => (await pg`SELECT t.name AS team, u.endpoint, u.status, u.input_tokens AS input, u.output_tokens AS output FROM usage u JOIN teams t ON t.id = u.team_id WHERE u.request_id = ${requestId}`) as Record<string, unknown>[],
      { what: `the usage row of ${requestId} in Postgres`, until: (rows) => rows.length === 1 },
    );
    expect(row).toEqual({ team: "acme", endpoint: "chat", status: "completed", input: data.usage!.prompt_tokens, output: data.usage!.completion_tokens });
    const usage = await kiln("usage", "--team", "acme", "--json");
    expect(usage.code).toBe(0);
    expect(JSON.parse(usage.out).data).toMatchObject([{ team: "acme", model: server.modelId, requests: 1, input_tokens: data.usage!.prompt_tokens }]);
  });

  test("a stored response comes back from Postgres, and its stream replays event for event", async () => {
    const openai = client(server.key);
    const done = await openai.responses.create({ model: server.modelId, input: "Hi", max_output_tokens: 16, temperature: 0 });
    const { _request_id: _, ...stored } = (await openai.responses.retrieve(done.id)) as typeof done & { _request_id?: string };
    expect(stored).toEqual(JSON.parse(JSON.stringify(done)));
    const sent: unknown[] = [];
    for await (const ev of await openai.responses.create({ model: server.modelId, input: "Say hello", max_output_tokens: 16, temperature: 0, stream: true })) sent.push(ev);
    const id = (sent.at(-1) as { response: { id: string } }).response.id;
    const replay: unknown[] = [];
    for await (const ev of await openai.responses.retrieve(id, { stream: true })) replay.push(ev);
    expect(replay).toEqual(sent);
    const [events] = (await pg`SELECT count(*)::int AS n FROM response_events WHERE response_id = ${id}`) as { n: number }[];
    expect(events!.n).toBe(sent.length);
  });

  test("an uploaded file downloads as sent: its row in Postgres, its bytes in this replica's data dir", async () => {
    const bytes = new TextEncoder().encode("kiln keeps this file's row in Postgres\n");
    const file = await client(server.key).files.create({ file: await toFile(bytes, "notes.txt"), purpose: "user_data" });
    const content = await client(server.key).files.content(file.id);
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(bytes);
    expect(await pg`SELECT filename, bytes::int AS bytes FROM files WHERE id = ${file.id}`).toEqual([{ filename: "notes.txt", bytes: bytes.length }]);
    expect(readFileSync(join(server.deps.config.dataDir, "files", file.id))).toEqual(Buffer.from(bytes));
  });

  test("a database that cannot be reached stops `kiln serve` and the CLI with one line naming it, never its password", async () => {
    const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const nowhere = `postgres://kiln:hunter2@127.0.0.1:${closed.port}/kiln`;
    closed.stop(true);
    for (const args of [["teams", "list"], ["serve", "--port", "0"]]) {
      const { code, err } = await kilnAt(nowhere, ...args);
      expect(code).toBe(2);
      const lines = err.split("\n").filter((l) => l.startsWith("kiln: "));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toStartWith(`kiln: cannot open the Postgres database kiln on 127.0.0.1:${new URL(nowhere).port} (KILN_DATABASE_URL): `);
      expect(err).not.toContain("hunter2");
    }
  }, 60_000);
});
