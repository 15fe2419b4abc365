// robots.txt in the fetch policy, against loopback servers: the kiln group obeyed, the file read once per origin,
// 4xx read as allow-all and 5xx or unreachable as disallow-all (RFC 9309), every redirect hop checked, the deadline kept.
import { afterEach, expect, test } from "bun:test";
import { type FetchPolicy, fetchRemote } from "../../../src/media/fetch-policy.ts";
import { directConnector } from "../../../src/media/fetch-net.ts";
import { type LoopbackNet, type LoopbackServer, refusal, loopbackScope } from "../../helpers/loopback-net.ts";

const POLICY: FetchPolicy = {
  maxBytes: 64 * 1024, timeoutMs: 10_000, maxRedirects: 3, allowList: [], robots: true, userAgent: "kiln/0.1.0", allowLoopback: true,
};

const scope = loopbackScope();
afterEach(scope.release);

/** robots.txt is cached per origin for the whole process: each test's names are its own, so no test sees another's. */
let made = 0;
const fresh = (label: string) => `${label}-${++made}.test`;

/** A site whose robots.txt answers (per Host name) from `robots`, and whose other paths answer "ok". */
function site(robots: (host: string) => Response | Promise<Response>): LoopbackServer {
  return scope.server((req, u) => (u.pathname === "/robots.txt" ? robots(req.headers.get("host")!.replace(/:\d+$/, "")) : new Response("ok")));
}

function net(names: string[]): LoopbackNet {
  return scope.net(Object.fromEntries(names.map((name) => [name, ["127.0.0.1"]])));
}

const text = (body: string) => () => new Response(body, { headers: { "content-type": "text/plain" } });
const paths = (s: LoopbackServer) => s.seen.map((r) => `${r.host!.replace(/:\d+$/, "")}${r.path}`);

test("the kiln group's Disallow refuses a path before it is requested; other paths pass; the file is read once", async () => {
  const host = fresh("robots");
  const s = site(text("User-agent: *\nDisallow: /\n\nUser-agent: kiln\nDisallow: /img.png\nAllow: /\n"));
  const n = net([host]);
  expect(await refusal(fetchRemote(s.url(host, "/img.png"), POLICY, n))).toEqual({ reason: "robots", message: `robots.txt at ${host}:${s.port} disallows /img.png` });
  // Allowed only because the kiln group wins over `*`, which disallows everything.
  expect((await fetchRemote(s.url(host, "/other.png"), POLICY, n)).finalUrl).toBe(s.url(host, "/other.png"));
  expect((await fetchRemote(s.url(host, "/third.png"), POLICY, n)).finalUrl).toBe(s.url(host, "/third.png"));
  expect(paths(s)).toEqual([`${host}/robots.txt`, `${host}/other.png`, `${host}/third.png`]);
  expect(s.seen[0]!.userAgent).toBe("kiln/0.1.0");
});

test("a robots.txt answering 404 allows everything", async () => {
  const host = fresh("missing");
  const s = site(() => new Response("not here", { status: 404 }));
  expect((await fetchRemote(s.url(host, "/a.png"), POLICY, net([host]))).bytes.length).toBe(2);
  expect(paths(s)).toEqual([`${host}/robots.txt`, `${host}/a.png`]);
});

test("a robots.txt answering 5xx disallows everything", async () => {
  const host = fresh("broken");
  const s = site(() => new Response("oops", { status: 503 }));
  expect(await refusal(fetchRemote(s.url(host, "/a.png"), POLICY, net([host])))).toEqual({
    reason: "robots", message: `robots.txt at ${host}:${s.port} answered HTTP 503, which RFC 9309 reads as disallowing everything`,
  });
  expect(paths(s)).toEqual([`${host}/robots.txt`]);
});

test("a robots.txt that cannot be reached disallows everything", async () => {
  const host = fresh("unreachable");
  const s = site(text(""));
  const direct = directConnector();
  const n = scope.net({ [host]: ["127.0.0.1"] }, (req) =>
    req.url.pathname === "/robots.txt" ? Promise.reject(Object.assign(new Error("refused"), { code: "ECONNREFUSED" })) : direct(req),
  );
  expect(await refusal(fetchRemote(s.url(host, "/a.png"), POLICY, n))).toEqual({
    reason: "robots",
    message: `robots.txt at ${host}:${s.port} could not be fetched (could not connect to ${host}:${s.port}: the connection was refused), which RFC 9309 reads as disallowing everything`,
  });
  expect(s.seen).toEqual([]);
});

test("robots.txt is checked at every redirect hop, on the hop's own origin", async () => {
  const [from, to] = [fresh("from"), fresh("to")];
  const s = scope.server((req, u) => {
    const host = req.headers.get("host")!.replace(/:\d+$/, "");
    if (u.pathname === "/robots.txt") return new Response(host === to ? "User-agent: *\nDisallow: /private/\n" : "");
    return u.pathname === "/go" ? new Response(null, { status: 302, headers: { location: `http://${to}:${u.port}/private/a.png` } }) : new Response("ok");
  });
  expect(await refusal(fetchRemote(s.url(from, "/go"), POLICY, net([from, to])))).toEqual({
    reason: "robots", message: `robots.txt at ${to}:${s.port} disallows /private/a.png`,
  });
  expect(paths(s)).toEqual([`${from}/robots.txt`, `${from}/go`, `${to}/robots.txt`]);
});

test("robots.txt is fetched under the same policy: its redirect to a private address leaves it unread, so disallowed", async () => {
  const host = fresh("sneaky");
  const s = site(() => new Response(null, { status: 301, headers: { location: "http://lan.test/robots.txt" } }));
  const lan = scope.net({ [host]: ["127.0.0.1"], "lan.test": ["192.168.0.10"] });
  const r = await refusal(fetchRemote(s.url(host, "/a.png"), POLICY, lan));
  expect(r.reason).toBe("robots");
  expect(r.message).toContain("lan.test resolves to a private address");
  expect(lan.connected).toEqual(["127.0.0.1"]);
  expect(paths(s)).toEqual([`${host}/robots.txt`]);
});

test("a robots.txt that never answers uses up the fetch's one deadline: a timeout, not a robots refusal", async () => {
  const host = fresh("slow");
  const s = site(() => new Promise<Response>(() => {}));
  expect(await refusal(fetchRemote(s.url(host, "/a.png"), { ...POLICY, timeoutMs: 300 }, net([host])))).toEqual({
    reason: "timeout", message: `fetching ${s.url(host, "/a.png")} took longer than the 300 ms limit`,
  });
});

test("with robots off, robots.txt is never requested", async () => {
  const host = fresh("off");
  const s = site(text("User-agent: *\nDisallow: /\n"));
  expect((await fetchRemote(s.url(host, "/a.png"), { ...POLICY, robots: false }, net([host]))).bytes.length).toBe(2);
  expect(paths(s)).toEqual([`${host}/a.png`]);
});
