// The fetch policy end to end against loopback servers, through a net that cannot reach beyond loopback: which URLs
// and addresses are refused (and that nothing is contacted for them), redirects, the allow-list, DNS and HTTP failures.
import { afterEach, describe, expect, test } from "bun:test";
import { loadConfig } from "../../../src/config.ts";
import { systemResolver } from "../../../src/media/fetch-net.ts";
import { type FetchPolicy, fetchPolicyFromConfig, fetchRemote } from "../../../src/media/fetch-policy.ts";
import { MAX_URL_CHARS } from "../../../src/media/fetch-target.ts";
import { refusal, serveLoopback, loopbackScope } from "../../helpers/loopback-net.ts";

const POLICY: FetchPolicy = {
  maxBytes: 64 * 1024, timeoutMs: 10_000, maxRedirects: 3, allowList: [], robots: false, userAgent: "kiln/test", allowLoopback: true,
};

// Whatever a test asserted, no connection outside loopback was even attempted (scope.release checks).
const scope = loopbackScope();
const { server, net } = scope;
afterEach(scope.release);

test("a name is resolved by the injected resolver and its address connected to, with the name in the Host header", async () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
  const s = server(() => new Response(png, { headers: { "content-type": "image/png" } }));
  const n = net({ "img.test": ["127.0.0.1"] });
  const got = await fetchRemote(s.url("img.test", "/a.png?x=1"), POLICY, n);
  expect(got).toEqual({ bytes: png, contentType: "image/png", finalUrl: s.url("img.test", "/a.png?x=1") });
  expect(n.resolved).toEqual(["img.test"]);
  expect(n.connected).toEqual(["127.0.0.1"]);
  expect(s.seen).toEqual([{ path: "/a.png?x=1", host: `img.test:${s.port}`, userAgent: "kiln/test", acceptEncoding: "identity" }]);
});

test("a name with several addresses: each is tried in turn until one accepts the connection", async () => {
  const s = server(() => new Response("ok"));
  // Nothing listens on 127.0.0.2 (the server is bound to 127.0.0.1): that connection is refused.
  const n = net({ "two.test": ["127.0.0.2", "127.0.0.1"] });
  expect(new TextDecoder().decode((await fetchRemote(s.url("two.test", "/"), POLICY, n)).bytes)).toBe("ok");
  expect(n.connected).toEqual(["127.0.0.2", "127.0.0.1"]);
});

describe("the default policy (from the config's defaults)", () => {
  const policy = fetchPolicyFromConfig(loadConfig({}, []));

  test("keeps loopback shut", () => {
    expect(policy.allowLoopback).toBeUndefined();
    expect(policy.robots).toBe(true);
  });

  test("refuses loopback, private, link-local and metadata addresses, however spelt or resolved, without connecting", async () => {
    const n = net({ "private.test": ["10.1.2.3"], "mixed.test": ["8.8.8.8", "10.0.0.5"], "mapped.test": ["::ffff:7f00:1"] });
    const cases: [string, string][] = [
      ["http://127.0.0.1/x", "127.0.0.1 is a loopback address"],
      ["http://[::1]:8080/x", "::1 is a loopback address"],
      ["http://10.0.0.1/x", "10.0.0.1 is a private address"],
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"],
      ["http://[::ffff:127.0.0.1]/x", "::ffff:7f00:1 is an IPv4-mapped form of 127.0.0.1, a loopback address"],
      ["http://2130706433/x", "127.0.0.1 is a loopback address"],
      ["http://0x7f.1/x", "127.0.0.1 is a loopback address"],
      ["https://[fd00:ec2::254]/x", "fd00:ec2::254 is a cloud metadata address"],
      ["http://0.0.0.0/x", "0.0.0.0 is an unspecified address"],
      ["http://private.test/x", "private.test resolves to a private address"],
      ["http://mixed.test/x", "mixed.test resolves to a private address"],
      ["http://mapped.test/x", "mapped.test resolves to an IPv4-mapped form of a loopback address"],
    ];
    for (const [url, why] of cases) {
      const r = await refusal(fetchRemote(url, policy, n));
      expect([url, r]).toEqual([url, { reason: "blocked", message: `the fetch policy refused ${new URL(url).href}: ${why}` }]);
    }
    expect(n.connected).toEqual([]);
  });

  test("with the real network: a live loopback server is refused and never sees a request", async () => {
    const s = server(() => new Response("secret"));
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "127.1"]) {
      const r = await refusal(fetchRemote(`http://${host}:${s.port}/x`, policy));
      expect(r.reason).toBe("blocked");
    }
    // The system resolver reads localhost from /etc/hosts (no DNS query leaves the box).
    expect(await systemResolver("localhost")).toContain("127.0.0.1");
    expect((await refusal(fetchRemote(`http://localhost:${s.port}/x`, policy))).message).toMatch(
      /^the fetch policy refused http:\/\/localhost:\d+\/x: localhost resolves to a loopback address$/,
    );
    expect(s.seen).toEqual([]);
  });
});

describe("allowLoopback (tests only) opens loopback and nothing else", () => {
  test("private and link-local addresses stay refused", async () => {
    const n = net({ "lan.test": ["192.168.1.1"] });
    expect(await refusal(fetchRemote("http://10.0.0.1/", POLICY, n))).toEqual({ reason: "blocked", message: "the fetch policy refused http://10.0.0.1/: 10.0.0.1 is a private address" });
    expect((await refusal(fetchRemote("http://169.254.169.254/", POLICY, n))).reason).toBe("blocked");
    expect((await refusal(fetchRemote("http://[::ffff:7f00:1]/", POLICY, n))).reason).toBe("blocked");
    expect((await refusal(fetchRemote("http://lan.test/", POLICY, n))).reason).toBe("blocked");
    expect(n.connected).toEqual([]);
  });
});

describe("redirects", () => {
  test("are followed by hand, a relative Location resolved against the hop, and the final URL reported", async () => {
    const s = server((_, u) => (u.pathname === "/a" ? new Response(null, { status: 301, headers: { location: "/b" } }) : new Response("B")));
    const n = net({ "r.test": ["127.0.0.1"] });
    const got = await fetchRemote(s.url("r.test", "/a"), POLICY, n);
    expect([new TextDecoder().decode(got.bytes), got.finalUrl]).toEqual(["B", s.url("r.test", "/b")]);
    expect(s.seen.map((r) => r.path)).toEqual(["/a", "/b"]);
  });

  test("each hop is resolved and vetted again: a redirect to a name resolving to 192.168.1.1 is refused unvisited", async () => {
    const s = server(() => new Response(null, { status: 302, headers: { location: "http://inner.test/admin" } }));
    const n = net({ "outer.test": ["127.0.0.1"], "inner.test": ["192.168.1.1"] });
    expect(await refusal(fetchRemote(s.url("outer.test", "/r"), POLICY, n))).toEqual({
      reason: "blocked", message: "the fetch policy refused http://inner.test/admin: inner.test resolves to a private address",
    });
    expect(n.resolved).toEqual(["outer.test", "inner.test"]);
    expect(n.connected).toEqual(["127.0.0.1"]);
  });

  test("a redirect to a metadata address or to another scheme is refused", async () => {
    const targets: Record<string, string> = { "/meta": "http://169.254.169.254/latest/", "/file": "file:///etc/passwd", "/bad": "http://[zz/" };
    const s = server((_, u) => new Response(null, { status: 307, headers: { location: targets[u.pathname]! } }));
    const n = net({ "r.test": ["127.0.0.1"] });
    expect((await refusal(fetchRemote(s.url("r.test", "/meta"), POLICY, n))).message).toBe(
      "the fetch policy refused http://169.254.169.254/latest/: 169.254.169.254 is a cloud metadata address",
    );
    expect(await refusal(fetchRemote(s.url("r.test", "/file"), POLICY, n))).toEqual({ reason: "bad_url", message: "only http and https URLs are fetched, not file: URLs" });
    expect(await refusal(fetchRemote(s.url("r.test", "/bad"), POLICY, n))).toEqual({ reason: "bad_url", message: `${s.url("r.test", "/bad")} redirected to an invalid URL` });
    expect(n.connected).toEqual(["127.0.0.1", "127.0.0.1", "127.0.0.1"]);
  });

  test("more than maxRedirects is refused after exactly that many are followed; 0 refuses the first", async () => {
    const s = server((_, u) => new Response(null, { status: 302, headers: { location: `/loop${Number(u.pathname.slice(5) || 0) + 1}` } }));
    const n = net({ "loop.test": ["127.0.0.1"] });
    expect(await refusal(fetchRemote(s.url("loop.test", "/loop"), POLICY, n))).toEqual({
      reason: "redirects", message: `${s.url("loop.test", "/loop")} redirected more than the limit of 3 times`,
    });
    expect(s.seen.map((r) => r.path)).toEqual(["/loop", "/loop1", "/loop2", "/loop3"]);
    expect((await refusal(fetchRemote(s.url("loop.test", "/loop"), { ...POLICY, maxRedirects: 0 }, n))).reason).toBe("redirects");
    expect(s.seen.length).toBe(5);
  });
});

describe("URLs refused before any lookup", () => {
  test("schemes other than http(s), malformed URLs, and credentials (not echoed)", async () => {
    const n = net({ "h.test": ["127.0.0.1"] });
    const cases: [string, string][] = [
      ["file:///etc/passwd", "only http and https URLs are fetched, not file: URLs"],
      ["ftp://h.test/a.png", "only http and https URLs are fetched, not ftp: URLs"],
      ["data:image/png;base64,iVBORw0KGgo=", "only http and https URLs are fetched, not data: URLs"],
      ["gopher://h.test:70/_x", "only http and https URLs are fetched, not gopher: URLs"],
      ["javascript:alert(1)", "only http and https URLs are fetched, not javascript: URLs"],
      ["not a url", "not a url is not a valid URL"],
      ["http://user:s3cret@h.test/a.png", "URLs with credentials (user:password@host) are not fetched"],
      ["http://user@h.test/a.png", "URLs with credentials (user:password@host) are not fetched"],
    ];
    for (const [url, message] of cases) expect([url, await refusal(fetchRemote(url, POLICY, n))]).toEqual([url, { reason: "bad_url", message }]);
    expect([n.resolved, n.connected]).toEqual([[], []]);
  });

  test(`a URL longer than ${MAX_URL_CHARS} characters (as parsed, escapes included) is refused, first or redirected to`, async () => {
    const n = net({ "h.test": ["127.0.0.1"] });
    const longest = `http://h.test/${"a".repeat(MAX_URL_CHARS - "http://h.test/".length)}`;
    const tooLong = `${longest}b`;
    const tooLongMessage = `the URL is ${MAX_URL_CHARS + 1} characters long; URLs longer than ${MAX_URL_CHARS} characters are not fetched`;
    expect(await refusal(fetchRemote(tooLong, POLICY, n))).toEqual({ reason: "bad_url", message: tooLongMessage });
    // Each "é" becomes "%C3%A9" in the parsed URL: short as given, too long as fetched.
    const escaped = `http://h.test/${"é".repeat(MAX_URL_CHARS / 6)}`;
    expect(escaped.length).toBeLessThan(MAX_URL_CHARS);
    expect((await refusal(fetchRemote(escaped, POLICY, n))).reason).toBe("bad_url");
    expect([n.resolved, n.connected]).toEqual([[], []]);
    const s = server((_, u) => (u.pathname === "/go" ? new Response(null, { status: 302, headers: { location: tooLong } }) : new Response("ok")));
    const r = net({ "h.test": ["127.0.0.1"] });
    expect(await refusal(fetchRemote(s.url("h.test", "/go"), POLICY, r))).toEqual({ reason: "bad_url", message: tooLongMessage });
    expect(s.seen.map((q) => q.path)).toEqual(["/go"]);
    // The longest URL allowed is fetched.
    const atLimit = s.url("h.test", `/${"a".repeat(MAX_URL_CHARS - s.url("h.test", "/").length)}`);
    expect(atLimit.length).toBe(MAX_URL_CHARS);
    expect((await fetchRemote(atLimit, POLICY, r)).finalUrl).toBe(atLimit);
  });
});

describe("the operator's allow-list", () => {
  test("only listed hosts are fetched, at the first URL and at every redirect", async () => {
    const s = server((_, u) => (u.pathname === "/away" ? new Response(null, { status: 302, headers: { location: `http://other.test:${u.port}/x` } }) : new Response("ok")));
    const n = net({ "a.cdn.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
    const policy = { ...POLICY, allowList: ["*.cdn.test"] };
    expect((await fetchRemote(s.url("a.cdn.test", "/x"), policy, n)).finalUrl).toBe(s.url("a.cdn.test", "/x"));
    expect(await refusal(fetchRemote(s.url("other.test", "/x"), policy, n))).toEqual({
      reason: "blocked", message: `the fetch policy refused ${s.url("other.test", "/x")}: other.test is not on the operator's allow-list`,
    });
    expect((await refusal(fetchRemote(s.url("a.cdn.test", "/away"), policy, n))).message).toContain("other.test is not on the operator's allow-list");
    // other.test was never even resolved.
    expect(n.resolved).toEqual(["a.cdn.test", "a.cdn.test"]);
    expect(s.seen.map((r) => r.path)).toEqual(["/x", "/away"]);
  });

  test("a listed host is still vetted: the list does not open private addresses", async () => {
    const n = net({ "intranet.test": ["10.9.9.9"] });
    const r = await refusal(fetchRemote("http://intranet.test/a.png", { ...POLICY, allowList: ["intranet.test"] }, n));
    expect(r).toEqual({ reason: "blocked", message: "the fetch policy refused http://intranet.test/a.png: intranet.test resolves to a private address" });
  });
});

describe("DNS and HTTP failures", () => {
  test("a name that does not resolve, or resolves to nothing, is a dns refusal", async () => {
    const n = net({ "empty.test": [] });
    expect(await refusal(fetchRemote("http://nowhere.test/a.png", POLICY, n))).toEqual({ reason: "dns", message: "the host name nowhere.test could not be resolved" });
    expect(await refusal(fetchRemote("http://empty.test/a.png", POLICY, n))).toEqual({ reason: "dns", message: "the host name empty.test has no addresses" });
  });

  test("a refused connection and an error status are unreachable, named", async () => {
    const gone = serveLoopback(() => new Response("x"));
    gone.stop();
    const n = net({ "gone.test": ["127.0.0.1"], "h.test": ["127.0.0.1"] });
    expect(await refusal(fetchRemote(gone.url("gone.test", "/a"), POLICY, n))).toEqual({
      reason: "unreachable", message: `could not connect to gone.test:${gone.port}: the connection was refused`,
    });
    const s = server(() => new Response("nope", { status: 404 }));
    expect(await refusal(fetchRemote(s.url("h.test", "/missing.png"), POLICY, n))).toEqual({
      reason: "unreachable", message: `${s.url("h.test", "/missing.png")} answered HTTP 404`,
    });
  });
});
