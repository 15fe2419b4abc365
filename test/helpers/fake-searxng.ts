// A small fake SearXNG instance on loopback (127.0.0.1, a free port) for web_search tests: it answers
// GET /…/search?q=…&format=json in the mode a test sets, and logs every request it receives.
export type FakeMode = "ok" | "slow" | "garbage" | "huge" | "huge_chunked" | "status" | "redirect" | "empty" | "no_list";

export interface FakeSearxng {
  url: string;
  mode: FakeMode;
  /** Every request received: method, path and query, in order. */
  log: { method: string; path: string; query: string | null }[];
  stop(): void;
}

export const FAKE_RESULTS = [
  { title: "Paris - Wikipedia", url: "https://en.wikipedia.org/wiki/Paris", content: "Paris is the capital and largest city of France." },
  { title: "Paris travel guide", url: "https://travel.example.org/paris", content: "Things to do in Paris." },
  { title: "not a web link", url: "javascript:alert(1)", content: "skipped by kiln" },
  { title: "France", url: "https://en.wikipedia.org/wiki/France", content: "France is a country in Western Europe." },
];

export function startFakeSearxng(): FakeSearxng {
  const fake: FakeSearxng = { url: "", mode: "ok", log: [], stop: () => server.stop(true) };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      fake.log.push({ method: req.method, path: u.pathname, query: u.searchParams.get("q") });
      switch (fake.mode) {
        case "slow":
          await Bun.sleep(3000);
          return Response.json({ results: FAKE_RESULTS });
        case "garbage":
          return new Response("<html>not json</html>", { headers: { "content-type": "text/html" } });
        case "huge":
          return new Response("x".repeat(200_000));
        case "huge_chunked":
          // No Content-Length: the cap must be enforced while reading.
          return new Response(new ReadableStream({
            pull(c) {
              c.enqueue(new TextEncoder().encode(`{"results": [${'{"title": "t", "url": "https://a.example"},'.repeat(500)}`));
            },
          }));
        case "status":
          return new Response("bad gateway", { status: 502 });
        case "redirect":
          return new Response(null, { status: 302, headers: { location: `${fake.url}/elsewhere` } });
        case "empty":
          return Response.json({ results: [] });
        case "no_list":
          return Response.json({ answers: ["no results field"] });
        default:
          return Response.json({ query: u.searchParams.get("q"), results: FAKE_RESULTS });
      }
    },
  });
  fake.url = `http://127.0.0.1:${server.port}/searx`;
  return fake;
}
