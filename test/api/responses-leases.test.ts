// Leases on Postgres, end to end on a real kiln: at start-up it recovers only responses whose lease ran out (never one
// another live replica holds), it keeps taking expired ones over while it runs, and a drain releases what it leaves; a
// job another replica claimed stops here with its writes refused; a job re-run keeps the request id it is settled under.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { closeDatabase, type Db, openDatabase } from "../../src/db/client.ts";
import { insertResponse } from "../../src/db/responses-repo.ts";
import { createFirstTeam } from "../../src/db/teams-repo.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { freshPostgresDatabase } from "../helpers/shared-postgres.ts";
import { waitFor } from "../helpers/wait-for.ts";

let url: string;
let db: Db;
let pg: SQL;
let server: TestServer | undefined;
let key: string;
let teamId: number;
let keyId: number;
let add: (id: string, o: { status: string; owner: string; until: number }) => Promise<void>;

beforeAll(async () => {
  url = await freshPostgresDatabase();
  db = await openDatabase(tempDir("kiln-leases-"), { url });
  pg = new SQL(url, { max: 1 });
  // The first team and key, made here so that rows can be stored before kiln's first start.
  const first = (await createFirstTeam(db, "default", "first key", () => {}))!;
  key = first.key;
  teamId = first.teamId;
  keyId = first.id;
  add = (id, o) =>
    insertResponse(db, {
      id, teamId: first.teamId, keyId: first.id, model: "kiln-tiny-v1", status: o.status, background: true, requestJson: "{}", responseJson: "{}",
      createdAt: 100, updatedAt: 100, expiresAt: 10_000_000_000, leaseOwner: o.owner, leaseUntil: o.until,
    }, []);
});
afterAll(async () => {
  await server?.stop(1000);
  await closeDatabase(db);
  await pg.close();
});

const row = async (id: string) => (await pg`SELECT status, lease_owner, lease_until FROM responses WHERE id = ${id}`)[0] as { status: string; lease_owner: string; lease_until: string };

describe("stored response leases on Postgres", () => {
  test("start-up recovers an expired lease and leaves a live one; later expired ones are taken over; a drain releases its own", async () => {
    const live = Date.now() + 10 * 60_000;
    await add("resp_expired", { status: "in_progress", owner: "kiln-dead", until: 1 });
    await add("resp_live", { status: "in_progress", owner: "kiln-alive", until: live });
    server = await startTestServer({ KILN_DATABASE_URL: url }, { key });
    // Recovered before the server listened.
    expect(await row("resp_expired")).toMatchObject({ status: "failed", lease_owner: server.deps.live.replica });
    await add("resp_later", { status: "in_progress", owner: "kiln-dead", until: Date.now() - 1 });
    await waitFor(async () => (await row("resp_later")).status, { what: "a lease expired while kiln runs taken over", until: (s) => s === "failed" });
    expect(await row("resp_live")).toMatchObject({ status: "in_progress", lease_owner: "kiln-alive", lease_until: String(live) });
    // A job of its own, cut by the drain, is released for the others at once.
    const res = await fetch(`${server.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: server.modelId, input: "Hello", temperature: 0, max_output_tokens: 3000, background: true }),
    });
    const id = ((await res.json()) as { id: string }).id;
    await waitFor(async () => (await row(id)).status, { what: "the job running", until: (s) => s === "in_progress" });
    expect((await row(id)).lease_owner).toBe(server.deps.live.replica);
    await server.stop(0);
    server = undefined;
    expect(await row(id)).toMatchObject({ status: "in_progress", lease_until: "0" });
  }, 60_000);

  test("a job whose lease another replica claimed stops here, and writes nothing more to it", async () => {
    server = await startTestServer({ KILN_DATABASE_URL: url }, { key });
    const s = server;
    const res = await fetch(`${s.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: s.modelId, input: "Hello", temperature: 0, max_output_tokens: 3000, background: true }),
    });
    const id = ((await res.json()) as { id: string }).id;
    await waitFor(async () => (await row(id)).status, { what: "the job running", until: (st) => st === "in_progress" });
    // As another replica's sweep would claim it had this one been paused past its lease.
    await pg`UPDATE responses SET lease_owner = 'kiln-other', lease_epoch = lease_epoch + 1, lease_until = ${Date.now() + 600_000} WHERE id = ${id}`;
    await waitFor(() => !s.deps.live.isLive(id), { what: "the job stopped here", timeoutMs: 10_000 });
    const events = async () => Number((await pg`SELECT count(*) AS n FROM response_events WHERE response_id = ${id}`)[0].n);
    const stored = await events();
    // Its last writes and its final record were refused: the row is as the claim left it, for its new runner to end.
    expect(await row(id)).toMatchObject({ status: "in_progress", lease_owner: "kiln-other" });
    // Settled under the request id stored with the response (its new runner's settlement would be the same row).
    const usage = await waitFor(async () => (await pg`SELECT u.status FROM usage u JOIN responses r ON r.request_id = u.request_id WHERE r.id = ${id}`) as { status: string }[], {
      what: "its usage settled", until: (u) => u.length > 0,
    });
    expect(usage.map((u) => u.status)).toEqual(["failed"]);
    expect(s.logs.some((l) => l.msg === "stored response taken over by another replica; its run here stops" && l.response_id === id)).toBe(true);
    expect(s.logs.filter((l) => l.level === "error")).toEqual([]);
    expect(await events()).toBe(stored);
    expect((await row(id)).lease_owner).toBe("kiln-other");
    await s.stop(0);
    server = undefined;
  }, 60_000);

  test("a queued job taken over runs under the request id it was created with, so it is settled once", async () => {
    const item = { id: "msg_requeued", type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] };
    await insertResponse(db, {
      id: "resp_requeued", teamId: teamId, keyId: keyId, model: "kiln-tiny-v1", status: "queued", background: true,
      requestJson: JSON.stringify({ model: "kiln-tiny-v1", max_output_tokens: 4, temperature: 0, background: true }), responseJson: "{}",
      createdAt: 100, updatedAt: 100, expiresAt: 10_000_000_000, leaseOwner: "kiln-dead", leaseUntil: 1, requestId: "req_created_with",
    }, [{ itemId: item.id, item }]);
    // Settled under the stored id, a second run's settlement is the same usage row (written once per request id).
    const s = (server = await startTestServer({ KILN_DATABASE_URL: url }, { key }));
    await waitFor(async () => (await row("resp_requeued")).status, { what: "the job re-run to its end", until: (st) => st === "incomplete" || st === "completed" });
    const usage = await waitFor(async () => (await pg`SELECT request_id FROM usage WHERE request_id = 'req_created_with'`) as unknown[], { what: "its usage row", until: (u) => u.length > 0 });
    expect(usage.length).toBe(1);
    await s.stop(0);
    server = undefined;
  }, 60_000);
});
