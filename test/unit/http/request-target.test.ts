import { describe, expect, test } from "bun:test";
import { internalUrl, pathAndQuery } from "../../../src/http/request-target.ts";

describe("pathAndQuery", () => {
  test.each([
    ["http://localhost:8080/v1/status", "/v1/status"],
    ["http://ai/v1/status?x=1", "/v1/status?x=1"],
    ["http://a:b:c/v1/models", "/v1/models"],
    ["http://[::1]/v1/status", "/v1/status"],
    ["/v1/status?x=1", "/v1/status?x=1"],
    ["http://h?x=1", "/?x=1"],
    ["http://h", "/"],
    ["//v1/status", "/v1/status"],
    ["http://h//v1/status", "/v1/status"],
    ["/v1/status#frag", "/v1/status"],
  ])("%s → %s", (raw, expected) => expect(pathAndQuery(raw)).toBe(expected));

  test("a target that is not a path", () => {
    expect(pathAndQuery("*")).toBeNull();
    expect(pathAndQuery("v1/status")).toBeNull();
  });
});

describe("internalUrl", () => {
  test("rebuilds on the fixed origin, whatever the Host was", () => {
    expect(internalUrl("http://a:b:c/v1/status?q=1")).toEqual({ url: "http://localhost/v1/status?q=1", path: "/v1/status" });
    expect(internalUrl("http://ai/v1/models")).toEqual({ url: "http://localhost/v1/models", path: "/v1/models" });
  });

  test("keeps percent-encoding and resolves dot segments the way a URL does", () => {
    expect(internalUrl("/v1/models/a%20b")!.path).toBe("/v1/models/a%20b");
    expect(internalUrl("/v1/x/../status")!.path).toBe("/v1/status");
  });

  test("a path that cannot leave the origin", () => {
    expect(internalUrl("/\\evil.example/x")?.url.startsWith("http://localhost/")).toBe(true);
    expect(internalUrl("*")).toBeNull();
  });
});
