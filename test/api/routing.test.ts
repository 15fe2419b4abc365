import { describe, expect, test } from "bun:test";
import { testKiln } from "../helpers/kiln.ts";

describe("unknown paths and bad bodies", () => {
  const k = testKiln();

  test("an unknown path is 404 with an empty body, GET and POST, with or without a key", async () => {
    for (const res of [
      await k.req("/v1/nope"),
      await k.req("/v1/nope", { method: "POST", json: { a: 1 } }),
      await k.req("/nothing/here", { key: null }),
      await k.req("/v1/status", { method: "DELETE" }),
    ]) {
      expect(res.status).toBe(404);
      expect(await res.text()).toBe("");
      expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    }
  });
});
