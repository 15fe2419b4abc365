import { describe, expect, test } from "bun:test";
import { generateSecret } from "../../src/auth/api-key.ts";
import { createKey, revokeKey } from "../../src/db/keys-repo.ts";
import { testKiln } from "../helpers/kiln.ts";

const UNAUTHORIZED = { error: { message: "Unauthorized", type: "authentication_error", param: null, code: "invalid_api_key" } };

describe("API key authentication", async () => {
  const k = await testKiln();

  async function expect401(res: Response) {
    expect(res.status).toBe(401);
    expect((await res.json()) as any).toEqual(UNAUTHORIZED);
    expect(res.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{32}$/);
  }

  test("missing key", async () => expect401(await k.req("/v1/models", { key: null })));
  test("malformed key", async () => expect401(await k.req("/v1/models", { key: "sk-not-ours" })));
  test("unknown key id", async () => expect401(await k.req("/v1/models", { key: `LLM|999|${generateSecret()}` })));
  test("wrong secret", async () => expect401(await k.req("/v1/models", { key: `LLM|${k.keyId}|${generateSecret()}` })));
  test("a non-Bearer Authorization scheme", async () =>
    expect401(await k.req("/v1/models", { headers: { authorization: `Basic ${btoa(k.key)}` } })));

  test("pipe spelling, underscore spelling, Bearer and x-api-key all work", async () => {
    const underscore = k.key.replaceAll("|", "_");
    for (const res of [
      await k.req("/v1/models"),
      await k.req("/v1/models", { key: underscore }),
      await k.req("/v1/models", { key: null, headers: { "x-api-key": k.key } }),
      await k.req("/v1/models", { key: null, headers: { "x-api-key": underscore } }),
    ]) {
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).object).toBe("list");
    }
  });

  test("revoking a key rejects it on the very next request; the team's other key keeps working", async () => {
    const other = await createKey(k.deps.db, k.teamId, "second");
    const doomed = await createKey(k.deps.db, k.teamId, "doomed");
    expect((await k.req("/v1/models", { key: doomed.key })).status).toBe(200);
    expect(await revokeKey(k.deps.db, doomed.id)).toBe(true);
    await expect401(await k.req("/v1/models", { key: doomed.key }));
    expect((await k.req("/v1/models", { key: other.key })).status).toBe(200);
    expect((await k.req("/v1/models")).status).toBe(200);
  });

  test("the status endpoint needs no key", async () => {
    expect((await k.req("/v1/status", { key: null })).status).toBe(200);
  });

  test("the request log line carries the team and never the key", async () => {
    await k.req("/v1/models");
    const line = k.logs.findLast((l) => l.msg === "request" && l.path === "/v1/models")!;
    expect(line).toMatchObject({ method: "GET", status: 200, team_id: k.teamId });
    expect(typeof line.duration_ms).toBe("number");
    expect(line.request_id).toMatch(/^req_/);
    const secret = k.key.split("|")[2]!;
    expect(JSON.stringify(k.logs)).not.toContain(secret);
  });
});
