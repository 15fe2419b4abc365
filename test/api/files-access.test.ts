// The Files API passes the same gate as every keyed route: endpoint-family permissions (403), a lapsed billing
// account (402) and the team's RPM (429), each before any byte of an upload is read, so a refused upload stores nothing.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { setBillingEnabled, setLapsed, credit } from "../../src/db/billing-repo.ts";
import { createKey, restrictKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { testKiln } from "../helpers/kiln.ts";

const k = await testKiln();
const stored = () => readdirSync(join(k.deps.config.dataDir, "files")).filter((n) => n !== "tmp").length;

/** An upload whose body records whether anyone read it. */
function upload(key: string) {
  const seen = { read: false };
  const text = '--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="x"\r\n\r\nabc\r\n--b--\r\n';
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (seen.read) return c.close();
      seen.read = true;
      c.enqueue(new TextEncoder().encode(text));
    },
  }, { highWaterMark: 0 });
  const res = k.req("/v1/files", { method: "POST", key, body, headers: { "content-type": "multipart/form-data; boundary=b" } });
  return { res, seen };
}

describe("the gate on /v1/files", () => {
  test("a key limited to other endpoint families gets 403 on every files route, its upload unread; one allowed files gets through", async () => {
    const chatOnly = await createKey(k.deps.db, k.teamId, "chat only");
    await restrictKey(k.deps.db, chatOnly.id, { endpoints: ["chat"] });
    const before = stored();
    const up = upload(chatOnly.key);
    const refused = await up.res;
    expect([refused.status, ((await refused.json()) as { error: { message: string } }).error.message]).toEqual([403, "This API key may not use the files endpoints (/v1/files)."]);
    expect(up.seen.read).toBe(false);
    for (const [method, path] of [["GET", "/v1/files"], ["GET", "/v1/files/file-x"], ["GET", "/v1/files/file-x/content"], ["DELETE", "/v1/files/file-x"]]) {
      expect([method, path, (await k.req(path!, { method, key: chatOnly.key })).status]).toEqual([method, path, 403]);
    }
    const filesOnly = await createKey(k.deps.db, k.teamId, "files only");
    await restrictKey(k.deps.db, filesOnly.id, { endpoints: ["files"] });
    expect((await upload(filesOnly.key).res).status).toBe(200);
    expect(stored()).toBe(before + 1);
  });

  test("a lapsed billing account: 402 before the upload is read", async () => {
    const team = await createTeam(k.deps.db, "lapsed");
    const key = (await createKey(k.deps.db, team.id, "k")).key;
    await setBillingEnabled(k.deps.db, team.id, true);
    await credit(k.deps.db, team.id, 1_000_000, null);
    await setLapsed(k.deps.db, team.id, true);
    const before = stored();
    const up = upload(key);
    expect((await up.res).status).toBe(402);
    expect(up.seen.read).toBe(false);
    expect((await k.req("/v1/files", { key })).status).toBe(402);
    expect(stored()).toBe(before);
  });

  test("uploads count against the team's RPM: past it, 429 with Retry-After, the upload unread; answers carry the limit headers", async () => {
    const team = await createTeam(k.deps.db, "limited");
    const key = (await createKey(k.deps.db, team.id, "k")).key;
    await updateTeam(k.deps.db, team.id, { rpmLimit: 2 });
    const first = await upload(key).res;
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit-requests")).toBe("2");
    expect((await k.req("/v1/files", { key })).status).toBe(200);
    const before = stored();
    const up = upload(key);
    const refused = await up.res;
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).not.toBeNull();
    expect(up.seen.read).toBe(false);
    expect(stored()).toBe(before);
  });
});
