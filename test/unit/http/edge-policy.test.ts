import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { declaredPolicy, edgePolicies, POLICY, policyTable, routeRegex } from "../../../src/http/edge-policy.ts";

const routes = [
  { method: "GET", path: "/swagger", hooks: { edge: POLICY.open } },
  { method: "GET", path: "/v1/status", hooks: { edge: POLICY.openWhileDraining } },
  { method: "GET", path: "/v1/models/:model", hooks: { edge: POLICY.keyed } },
  { method: "POST", path: "/v1/chat/completions", hooks: { edge: POLICY.keyedJson } },
  { method: "POST", path: "/v1/files", hooks: { edge: POLICY.keyedUpload } },
];

describe("policyTable", () => {
  const policyFor = policyTable(routes);

  test("each path gets the policy its route declared; HEAD is GET's", () => {
    expect(policyFor("POST", "/v1/chat/completions")).toEqual({ auth: true, body: "json", longRunning: true, drainExempt: false });
    expect(policyFor("GET", "/v1/status")).toEqual({ auth: false, body: "none", longRunning: false, drainExempt: true });
    expect(policyFor("HEAD", "/v1/status")?.drainExempt).toBe(true);
    expect(policyFor("GET", "/v1/models/kiln-tiny-v1")).toEqual({ auth: true, body: "none", longRunning: false, drainExempt: false });
    expect(policyFor("GET", "/swagger")?.auth).toBe(false);
    expect(policyFor("POST", "/v1/files")).toEqual({ auth: true, body: "stream", longRunning: true, drainExempt: false });
  });

  test("no policy (no key check, no body read) for paths and methods no route serves", () => {
    expect(policyFor("GET", "/v1/chat/completions")).toBeNull();
    expect(policyFor("POST", "/v1/status")).toBeNull();
    expect(policyFor("POST", "/v1/nope")).toBeNull();
    expect(policyFor("GET", "/v1/models/a/b")).toBeNull();
  });

  test("a route that declares no policy (or a malformed one) stops start-up, naming the route", () => {
    expect(() => policyTable([...routes, { method: "POST", path: "/v1/images/generations", hooks: {} }])).toThrow(
      "route POST /v1/images/generations declares no edge policy",
    );
    expect(() => declaredPolicy({ method: "GET", path: "/x", hooks: { edge: { auth: true } } })).toThrow("declares no edge policy");
    expect(() => declaredPolicy({ method: "GET", path: "/x" })).toThrow("declares no edge policy");
  });

  test("a policy declared in a route's options reaches the router's route list, through a plugin too", () => {
    const family = new Elysia({ name: "fam" }).use(edgePolicies).get("/v1/things", () => "ok", { edge: POLICY.keyed }).post("/v1/things", () => "ok");
    const app = new Elysia().use(family);
    expect(declaredPolicy(app.routes.find((r) => r.method === "GET")!)).toBe(POLICY.keyed);
    expect(() => policyTable(app.routes)).toThrow("route POST /v1/things declares no edge policy");
  });

  test("routeRegex", () => {
    expect(routeRegex("/v1/models/:model").test("/v1/models/x")).toBe(true);
    expect(routeRegex("/v1/chat/completions").test("/v1/chat/completions/")).toBe(true);
    expect(routeRegex("/v1/a.b").test("/v1/aXb")).toBe(false);
  });
});
