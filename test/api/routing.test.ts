import { describe, expect, test } from "bun:test";
import { testKiln } from "../helpers/kiln.ts";

describe("unknown paths and bad bodies", async () => {
  const k = await testKiln();

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

describe("unexpected exceptions", () => {
  test("become a sanitized 500 server_error and a log line with the request id", async () => {
    const k = await testKiln();
    k.deps.registry.list = () => {
      throw new Error("disk /var/secret/path exploded");
    };
    const res = await k.req("/v1/models");
    expect(res.status).toBe(500);
    const body = (await res.json()) as any;
    expect(body).toEqual({
      error: { message: "The server had an internal error while processing the request", type: "server_error", param: null, code: null },
    });
    const requestId = res.headers.get("x-request-id");
    const crash = k.logs.find((l) => l.msg === "unhandled exception")!;
    expect(crash.request_id).toBe(requestId);
    expect(String(crash.error)).toContain("exploded");
  });
});
