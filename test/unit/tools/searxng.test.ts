// The SearXNG provider against a fake instance on loopback: the request it makes, the results it keeps, and
// every way a search fails (time, status, redirect, not JSON, too big) as a SearchError; an abort stays an abort.
import { afterAll, describe, expect, test } from "bun:test";
import { SearchError } from "../../../src/tools/search-backend.ts";
import { SearxngBackend } from "../../../src/tools/searxng.ts";
import { queryOf, resultText } from "../../../src/tools/web-search.ts";
import { startFakeSearxng } from "../../helpers/fake-searxng.ts";

const fake = startFakeSearxng();
afterAll(() => fake.stop());
const backend = (o: Partial<{ timeoutMs: number; maxResults: number; maxBytes: number }> = {}) =>
  new SearxngBackend({ baseUrl: fake.url, timeoutMs: 300, maxResults: 5, maxBytes: 16 * 1024, ...o });
const signal = () => new AbortController().signal;

async function failure(mode: typeof fake.mode, o = {}): Promise<string> {
  fake.mode = mode;
  const e = await backend(o).search("q", { signal: signal() }).then(() => null, (err) => err);
  expect(e).toBeInstanceOf(SearchError);
  return (e as SearchError).message;
}

describe("SearxngBackend", () => {
  test("GET {base}/search?q=…&format=json; web links only, capped, title and snippet cleaned", async () => {
    fake.mode = "ok";
    const before = fake.log.length;
    const results = await backend({ maxResults: 2 }).search("capital of France & more", { signal: signal() });
    expect(fake.log.slice(before)).toEqual([{ method: "GET", path: "/searx/search", query: "capital of France & more" }]);
    expect(results).toEqual([
      { title: "Paris - Wikipedia", url: "https://en.wikipedia.org/wiki/Paris", snippet: "Paris is the capital and largest city of France." },
      { title: "Paris travel guide", url: "https://travel.example.org/paris", snippet: "Things to do in Paris." },
    ]);
    // The javascript: link is never a source.
    expect((await backend().search("x", { signal: signal() })).map((r) => r.url)).not.toContain("javascript:alert(1)");
    expect(backend().searchUrl("a b")).toBe(`${fake.url}/search?q=a+b&format=json`);
  });

  test("failures: timeout, error status, redirect (not followed), not JSON, too big declared or streamed", async () => {
    expect(await failure("slow")).toMatch(/did not answer within 300 ms/);
    expect(await failure("status")).toMatch(/HTTP 502/);
    const before = fake.log.length;
    expect(await failure("redirect")).toMatch(/HTTP 302/);
    expect(fake.log.slice(before).map((l) => l.path)).toEqual(["/searx/search"]);
    expect(await failure("garbage")).toMatch(/not JSON/);
    expect(await failure("huge")).toMatch(/larger than 16384 bytes/);
    expect(await failure("huge_chunked")).toMatch(/larger than 16384 bytes/);
  });

  test("an answer without a results list fails; an empty one is no results", async () => {
    expect(await failure("no_list")).toMatch(/no results list/);
    fake.mode = "empty";
    expect(await backend().search("q", { signal: signal() })).toEqual([]);
  });

  test("the caller's abort is not a failed search: it rejects with the abort", async () => {
    fake.mode = "slow";
    const c = new AbortController();
    setTimeout(() => c.abort(new Error("client gone")), 50);
    const e = await backend({ timeoutMs: 5000 }).search("q", { signal: c.signal }).catch((err) => err);
    expect(e).not.toBeInstanceOf(SearchError);
    expect(String(e)).toContain("client gone");
  });
});

describe("the tool as the model sees it", () => {
  test("queryOf reads a non-empty string query, else null", () => {
    expect(queryOf('{"query": " paris "}')).toBe("paris");
    expect(queryOf('{"query": ""}')).toBeNull();
    expect(queryOf('{"q": "x"}')).toBeNull();
    expect(queryOf("not json")).toBeNull();
  });

  test("results are numbered sources from the given first number", () => {
    const text = resultText("paris", [{ title: "A", url: "https://a.example", snippet: "about a" }, { title: "B", url: "https://b.example", snippet: "" }], 4);
    expect(text.split("\n").slice(1)).toEqual(["[4] A — https://a.example — about a", "[5] B — https://b.example"]);
    expect(resultText("x", [], 1)).toMatch(/found nothing/);
  });
});
