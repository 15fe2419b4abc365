// The fetch policy's caps against loopback servers: bytes (declared or streamed), the one deadline over the whole
// fetch (a silent server, a stalled body), and the caller's own abort.
import { afterEach, describe, expect, test } from "bun:test";
import { type FetchPolicy, fetchRemote } from "../../../src/media/fetch-policy.ts";
import { loopbackNet, refusal, loopbackScope } from "../../helpers/loopback-net.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const POLICY: FetchPolicy = {
  maxBytes: 1000, timeoutMs: 10_000, maxRedirects: 3, allowList: [], robots: false, userAgent: "kiln/test", allowLoopback: true,
};

const scope = loopbackScope();
const server = scope.server;
const net = () => scope.net({ "media.test": ["127.0.0.1"] });
afterEach(scope.release);

/** A body that never ends: 256-byte chunks for as long as it is read; `state.cancelled` once the reader gives up. */
function endless(state: { sent: number; cancelled: boolean }): ReadableStream<Uint8Array> {
  return new ReadableStream({
    pull(c) {
      state.sent += 256;
      c.enqueue(new Uint8Array(256).fill(7));
    },
    cancel() {
      state.cancelled = true;
    },
  });
}

describe("the byte cap", () => {
  test("a body of exactly the cap is accepted", async () => {
    const s = server(() => new Response(new Uint8Array(1000).fill(1)));
    expect((await fetchRemote(s.url("media.test", "/a"), POLICY, net())).bytes.length).toBe(1000);
  });

  test("a Content-Length over the cap is refused from the header", async () => {
    const s = server(() => new Response(new Uint8Array(1001)));
    expect(await refusal(fetchRemote(s.url("media.test", "/big"), POLICY, net()))).toEqual({
      reason: "too_large", message: `${s.url("media.test", "/big")} is 1001 bytes, more than the 1000 bytes limit`,
    });
  });

  test("a body without Content-Length is cut off once it passes the cap, and the connection dropped", async () => {
    const state = { sent: 0, cancelled: false };
    const s = server(() => new Response(endless(state)));
    expect(await refusal(fetchRemote(s.url("media.test", "/stream"), { ...POLICY, maxBytes: 4096 }, net()))).toEqual({
      reason: "too_large", message: `${s.url("media.test", "/stream")} is larger than the 4 KiB limit`,
    });
    await waitFor(() => state.cancelled, { what: "the server's endless body to be cancelled" });
    expect(state.sent).toBeGreaterThan(4096);
  });
});

describe("the deadline", () => {
  test("a server that never answers is a timeout at the policy's limit", async () => {
    const s = server(() => new Promise<Response>(() => {}));
    const t0 = performance.now();
    expect(await refusal(fetchRemote(s.url("media.test", "/silent"), { ...POLICY, timeoutMs: 300 }, net()))).toEqual({
      reason: "timeout", message: `fetching ${s.url("media.test", "/silent")} took longer than the 300 ms limit`,
    });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    expect(s.seen.map((r) => r.path)).toEqual(["/silent"]);
  });

  test("a body that stalls after its first bytes is a timeout too", async () => {
    const s = server(() => new Response(new ReadableStream({ start: (c) => c.enqueue(new Uint8Array(10)) })));
    expect((await refusal(fetchRemote(s.url("media.test", "/stall"), { ...POLICY, timeoutMs: 300 }, net()))).reason).toBe("timeout");
  });

  test("one deadline covers every redirect hop", async () => {
    const s = server((_, u) => (u.pathname === "/hop" ? new Response(null, { status: 302, headers: { location: "/silent" } }) : new Promise<Response>(() => {})));
    const r = await refusal(fetchRemote(s.url("media.test", "/hop"), { ...POLICY, timeoutMs: 300 }, net()));
    expect(r).toEqual({ reason: "timeout", message: `fetching ${s.url("media.test", "/hop")} took longer than the 300 ms limit` });
    expect(s.seen.map((x) => x.path)).toEqual(["/hop", "/silent"]);
  });

  test("a resolver that never answers is cut off by the deadline", async () => {
    const n = loopbackNet();
    n.resolve = () => new Promise(() => {});
    expect((await refusal(fetchRemote("http://slow-dns.test/a.png", { ...POLICY, timeoutMs: 200 }, n))).reason).toBe("timeout");
  });
});

test("the caller's abort ends the fetch with the caller's reason, not a refusal", async () => {
  const s = server(() => new Promise<Response>(() => {}));
  const caller = new AbortController();
  const fetching = fetchRemote(s.url("media.test", "/silent"), POLICY, net(), caller.signal);
  await waitFor(() => s.seen.length, { what: "the request to reach the server" });
  const reason = new Error("client went away");
  caller.abort(reason);
  await expect(fetching).rejects.toBe(reason);
  const early = new AbortController();
  early.abort(reason);
  await expect(fetchRemote(s.url("media.test", "/x"), POLICY, net(), early.signal)).rejects.toBe(reason);
  expect(s.seen.length).toBe(1);
});
