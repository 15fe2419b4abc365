// Every route the app serves declares its edge policy, and the edge applies it: keyed routes refuse a missing key
// before reading a byte of the body and run the gate; a keyed route reached without the edge answers 500.
import { describe, expect, test } from "bun:test";
import type { EdgeVisit } from "../../src/access/gate.ts";
import { declaredPolicy } from "../../src/http/edge-policy.ts";
import { testKiln } from "../helpers/kiln.ts";

/** A concrete path for a route pattern: every parameter (and wildcard) becomes "x". */
const concrete = (path: string) => path.replace(/:\w+/g, "x").replace(/\*$/, "x");

/** A body that records whether anyone read it. */
function watchedBody() {
  const seen = { pulled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      seen.pulled = true;
      c.enqueue(new TextEncoder().encode("{}"));
      c.close();
    },
    // Nothing is pulled until someone reads.
  }, { highWaterMark: 0 });
  return { body, seen };
}

describe("route policies", async () => {
  const k = await testKiln();
  const entered: string[] = [];
  const enter = k.deps.gate.enter.bind(k.deps.gate);
  k.deps.gate.enter = (v: EdgeVisit) => {
    entered.push(v.path);
    return enter(v);
  };
  const routes = k.routes.routes.map((r) => ({ method: r.method, path: r.path, policy: declaredPolicy(r) }));

  test("the app serves the routes this test walks, each with its declared policy", () => {
    expect(routes.length).toBeGreaterThanOrEqual(16);
    expect(routes.filter((r) => r.policy.auth).map((r) => `${r.method} ${r.path}`)).toContain("POST /v1/chat/completions");
    // Everything under /v1 but the status page is keyed; nothing outside it is.
    for (const r of routes) expect([r.method, r.path, r.policy.auth]).toEqual([r.method, r.path, r.path.startsWith("/v1/") && r.path !== "/v1/status"]);
  });

  test("keyed routes: a missing key is a 401 before any byte of the body is read, and the gate never runs", async () => {
    for (const r of routes.filter((r) => r.policy.auth)) {
      const withBody = r.method !== "GET";
      const { body, seen } = watchedBody();
      const res = await k.req(concrete(r.path), { method: r.method, key: null, headers: { "content-type": "application/json" }, ...(withBody ? { body } : {}) });
      expect([r.method, r.path, res.status, seen.pulled]).toEqual([r.method, r.path, 401, false]);
    }
    expect(entered).toEqual([]);
  });

  test("keyed routes with a key: the gate runs once for the path, the body is read only where the policy says, and the route sees the edge's key", async () => {
    for (const r of routes.filter((r) => r.policy.auth)) {
      entered.length = 0;
      const { body, seen } = watchedBody();
      const res = await k.req(concrete(r.path), { method: r.method, headers: { "content-type": "application/json" }, ...(r.method !== "GET" ? { body } : {}) });
      expect([r.method, r.path, entered]).toEqual([r.method, r.path, [concrete(r.path)]]);
      // (A streamed upload reads its own body, and refuses a JSON one before reading it; a JSON-or-form route reads JSON as JSON.)
      expect([r.method, r.path, seen.pulled]).toEqual([r.method, r.path, r.policy.body === "json" || r.policy.body === "form"]);
      // An empty body is a 400, an unknown id a 404, the model list a 200: the route ran with its key (no 401, no 500).
      expect([r.method, r.path, [200, 400, 404].includes(res.status)]).toEqual([r.method, r.path, true]);
    }
  });

  test("a streamed upload: the key before the body, then the edge reads none of it and the route streams it, with the idle timeout lifted until its answer", async () => {
    // (Dashboard form posts stream their small bodies to the page too, with no key: test/api/dashboard covers them.)
    expect(routes.filter((r) => r.policy.body === "stream" && r.policy.auth).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/files"]);
    expect(routes.filter((r) => r.policy.body === "stream" && !r.policy.auth).every((r) => r.method === "POST" && r.path.startsWith("/dashboard/"))).toBe(true);
    const form = () => {
      const text = '--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="x.jsonl"\r\n\r\n{}\r\n--b--\r\n';
      const seen = { pulled: 0 };
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          if (seen.pulled++) return c.close();
          c.enqueue(new TextEncoder().encode(text));
        },
      }, { highWaterMark: 0 });
      return { body, seen };
    };
    const timeouts: number[] = [];
    const server = { timeout: (_: Request, s: number) => void timeouts.push(s), requestIP: () => ({ address: "127.0.0.1" }) };
    const upload = (key: string | null, body: ReadableStream<Uint8Array>) =>
      k.handle(new Request("http://127.0.0.1/v1/files", {
        method: "POST", body, headers: { "content-type": "multipart/form-data; boundary=b", ...(key ? { authorization: `Bearer ${key}` } : {}) },
      }), server);
    const refused = form();
    expect((await upload(null, refused.body)).status).toBe(401);
    expect(refused.seen.pulled).toBe(0);
    const taken = form();
    const res = await upload(k.key, taken.body);
    expect([res.status, ((await res.json()) as { bytes: number }).bytes]).toEqual([200, 2]);
    expect(taken.seen.pulled).toBeGreaterThan(0);
    expect(timeouts).toEqual([0, k.deps.config.idleTimeoutS]);
  });

  test("while draining, only the routes whose policy says so still answer", async () => {
    k.deps.shutdown.draining = true;
    try {
      for (const r of routes) {
        const res = await k.handle(new Request(`http://127.0.0.1${concrete(r.path)}`, { method: r.method, headers: { authorization: `Bearer ${k.key}` } }), { timeout: () => {}, requestIP: () => ({ address: "127.0.0.1" }) });
        expect([r.method, r.path, res.status === 503]).toEqual([r.method, r.path, !r.policy.drainExempt]);
      }
    } finally {
      k.deps.shutdown.draining = false;
    }
  });

  test("open routes answer without a key and without the gate", async () => {
    entered.length = 0;
    for (const r of routes.filter((r) => !r.policy.auth)) {
      const res = await k.handle(new Request(`http://127.0.0.1${concrete(r.path)}`, { method: r.method }), { timeout: () => {}, requestIP: () => ({ address: "127.0.0.1" }) });
      if (r.path.startsWith("/dashboard")) {
        // Dashboard pages check their session cookie themselves: without one, sign-in (a redirect, or the sign-in
        // form's own refusal of a post without its token); an unknown asset is the route's own 404.
        expect([r.method, r.path, [200, 303, 403, 404, 415].includes(res.status)]).toEqual([r.method, r.path, true]);
        continue;
      }
      // An unknown docs asset is the route's own 404; the rest answer.
      expect([r.method, r.path, res.status]).toEqual([r.method, r.path, r.path.includes(":") ? 404 : 200]);
    }
    expect(entered).toEqual([]);
  });

  test("a keyed route reached without the edge (no key check, no gate) answers 500 rather than authenticating on its own", async () => {
    const res = await k.routes.handle(new Request("http://kiln.test/v1/models", { headers: { authorization: `Bearer ${k.key}` } }));
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { type: string; message: string } };
    expect(body.error).toMatchObject({ type: "server_error", message: "The server had an internal error while processing the request" });
    const crash = k.logs.find((l) => l.msg === "unhandled exception")!;
    expect(String(crash.error)).toContain("keyed route GET /v1/models was reached without the edge's key check");
  });
});
