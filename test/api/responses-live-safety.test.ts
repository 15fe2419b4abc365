// A stored response's live entry always ends: a cancel of a job stuck in its worker answers within a bound, and a
// job whose recorder throws after it went live stops, leaves no live entry behind, and its followers get an ending.
import { afterAll, describe, expect, test } from "bun:test";
import { CANCEL_WAIT_MS } from "../../src/api/responses/retrieve.ts";
import { recoverBackground } from "../../src/api/responses/stored.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { findResponse, insertResponse } from "../../src/db/responses-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import type { Db } from "../../src/db/client.ts";
import { testKiln } from "../helpers/kiln.ts";
import { startTestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

/** A background job's row as a crash or a create leaves it: `status`, its request and one user message. */
async function backgroundRow(db: Db, o: { id: string; teamId: number; keyId: number; model: string; status: string }): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  const request = { model: o.model, temperature: 0, max_output_tokens: 3000, background: true };
  const response = { id: o.id, object: "response", created_at: now, completed_at: null, status: o.status, model: o.model, output: [], error: null, incomplete_details: null, usage: null };
  await insertResponse(
    db,
    { ...o, background: true, requestJson: JSON.stringify(request), responseJson: JSON.stringify(response), attempts: 1, createdAt: now, updatedAt: now, expiresAt: now + 3600 },
    [{ itemId: "msg_in_1", item: { id: "msg_in_1", type: "message", role: "user", content: [{ type: "input_text", text: "Hello" }] } }],
  );
}

/** The promise's value, or null when it has not settled within `ms`. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, Bun.sleep(ms).then(() => null)]);

describe("the live entry of a stored response", () => {
  test("a cancel of a job stuck in its worker answers within the bound, with the response as it stands", async () => {
    const k = await testKiln();
    await backgroundRow(k.deps.db, { id: "resp_stuck", teamId: k.teamId, keyId: k.keyId, model: "m", status: "in_progress" });
    // A run that does not stop when told (a worker stuck in one pass).
    k.deps.live.begin("resp_stuck", () => {});
    try {
      const t0 = performance.now();
      const res = await within(k.req("/v1/responses/resp_stuck/cancel", { method: "POST" }), CANCEL_WAIT_MS + 10_000);
      expect(res).not.toBeNull();
      expect(res!.status).toBe(200);
      expect(((await res!.json()) as { status: string }).status).toBe("in_progress");
      expect(performance.now() - t0).toBeGreaterThanOrEqual(CANCEL_WAIT_MS - 50);
    } finally {
      k.deps.live.end("resp_stuck");
    }
  }, 30_000);

  describe("with a real model", () => {
    let server: Awaited<ReturnType<typeof startTestServer>>;
    afterAll(() => server?.stop(1000));

    test("a recorder that throws after the job went live: the run stops, the entry ends, the row ends failed, followers get an ending", async () => {
      server = await startTestServer();
      const { db } = server.deps;
      const team = await createTeam(db, "recovery");
      const key = await createKey(db, team.id, "k");
      await backgroundRow(db, { id: "resp_broken_log", teamId: team.id, keyId: key.id, model: server.modelId, status: "queued" });
      // A follower subscribes the moment the job goes live (no entry exists before: listen would find nothing).
      const heard: (string | null)[] = [];
      const { live } = server.deps;
      const begin = live.begin.bind(live);
      live.begin = (id, abort) => {
        begin(id, abort);
        live.listen(id, (ev) => heard.push(ev ? ev.type : null));
      };
      // The event log cannot be read: the recorder of the recovered job throws right after the job went live.
      sqliteOf(db).$client.run("ALTER TABLE response_events RENAME TO response_events_away");
      let recovery;
      try {
        recovery = await recoverBackground(server.deps);
      } finally {
        sqliteOf(db).$client.run("ALTER TABLE response_events_away RENAME TO response_events");
        live.begin = begin;
      }
      expect(recovery.failed).toEqual(["resp_broken_log"]);
      // The live follower heard the job's end (the end-of-job signal, nothing before it), so it is not left waiting.
      expect(heard).toEqual([null]);
      expect(live.isLive("resp_broken_log")).toBe(false);
      expect((await findResponse(db, "resp_broken_log", team.id))?.status).toBe("failed");
      // Its run was stopped, not left generating 3,000 tokens for no one.
      await waitFor(() => server.deps.scheduler.load().active, { what: "the failed job's run to stop", until: (n) => n === 0, timeoutMs: 10_000 });
      // A follower that comes after the end replays the store and ends too, rather than waiting on an entry that is gone.
      const follow = fetch(`${server.url}/v1/responses/resp_broken_log?stream=true`, { headers: { authorization: `Bearer ${key.key}` } }).then((r) => r.text());
      expect(await within(follow, 10_000)).not.toBeNull();
    }, 120_000);
  });
});
