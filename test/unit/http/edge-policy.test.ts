import { describe, expect, test } from "bun:test";
import { policyTable, routeRegex } from "../../../src/http/edge-policy.ts";

const routes = [
  { method: "GET", path: "/swagger" },
  { method: "GET", path: "/v1/status" },
  { method: "GET", path: "/v1/models/:model" },
  { method: "POST", path: "/v1/chat/completions" },
];

describe("policyTable", () => {
  const policyFor = policyTable(routes);

  test("generation routes are keyed and read a JSON body; the status page is public and answers while draining", () => {
    expect(policyFor("POST", "/v1/chat/completions")).toEqual({ auth: true, body: "json", longRunning: true, drainExempt: false });
    expect(policyFor("GET", "/v1/status")).toEqual({ auth: false, body: "none", longRunning: false, drainExempt: true });
    expect(policyFor("HEAD", "/v1/status")?.drainExempt).toBe(true);
    expect(policyFor("GET", "/v1/models/kiln-tiny-v1")).toEqual({ auth: true, body: "none", longRunning: false, drainExempt: false });
    expect(policyFor("GET", "/swagger")?.auth).toBe(false);
  });

  test("no policy (no key check, no body read) for paths and methods no route serves", () => {
    expect(policyFor("GET", "/v1/chat/completions")).toBeNull();
    expect(policyFor("POST", "/v1/status")).toBeNull();
    expect(policyFor("POST", "/v1/nope")).toBeNull();
    expect(policyFor("GET", "/v1/models/a/b")).toBeNull();
  });

  test("routeRegex", () => {
    expect(routeRegex("/v1/models/:model").test("/v1/models/x")).toBe(true);
    expect(routeRegex("/v1/chat/completions").test("/v1/chat/completions/")).toBe(true);
    expect(routeRegex("/v1/a.b").test("/v1/aXb")).toBe(false);
  });
});
