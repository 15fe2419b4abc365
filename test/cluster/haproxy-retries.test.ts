// The haproxy configuration kiln's cluster runs (build/cluster/haproxy-config.ts), in a real haproxy over stand-in
// replicas that count what reaches them: a request a replica answered 503, or took and closed without an answer, is
// never sent again (a replay would take a rate-limit token on each replica, or create a background job twice); a
// connection that failed before anything was sent is retried on another replica.
import { afterAll, describe, expect, test } from "bun:test";
import { createServer, type Server, type Socket } from "node:net";
import { type Haproxy, startHaproxy } from "../../build/cluster/launch.ts";
import { tempDir } from "../helpers/kiln.ts";

type Behaviour = "503" | "close" | "200";

/** A stand-in replica: healthy on GET /v1/status; anything else is counted and answered as `behaviour` says. */
async function replica(behaviour: Behaviour): Promise<{ url: string; hits: () => number; close(): void }> {
  let hits = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((sock) => {
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    let buffer = "";
    sock.on("data", (d) => {
      buffer += d.toString("latin1");
      for (;;) {
        const end = buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buffer.slice(0, end);
        const length = Number(/content-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffer.length < end + 4 + length) return;
        buffer = buffer.slice(end + 4 + length);
        const answer = (status: string, body: string) => sock.write(`HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
        if (head.startsWith("GET /v1/status ")) answer("200 OK", '{"status":"operational","is_alive":true}');
        else if ((hits++, behaviour === "close")) sock.destroy();
        else if (behaviour === "503") answer("503 Service Unavailable", '{"error":{"code":"service_overloaded"}}');
        else answer("200 OK", '{"ok":true}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    hits: () => hits,
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

const stops: (() => unknown)[] = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

async function haproxyOver(replicas: { url: string; close(): void }[]): Promise<Haproxy> {
  const h = await startHaproxy(tempDir("kiln-haproxy-"), 0, replicas);
  stops.push(...replicas.map((r) => () => r.close()), () => h.stop());
  return h;
}

const post = (h: Haproxy) => fetch(`${h.url}/v1/responses`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"background":true}' });

describe("haproxy in front of replicas", () => {
  test("a 503 from a replica reaches the client as it is, sent once: no other replica sees the request", async () => {
    const rs = [await replica("503"), await replica("503"), await replica("503")];
    const h = await haproxyOver(rs);
    const res = await post(h);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: { code: "service_overloaded" } });
    expect(rs.reduce((n, r) => n + r.hits(), 0)).toBe(1);
  }, 60_000);

  test("a POST a replica took and closed without an answer is not sent again: the client sees the failure (502 or a closed connection)", async () => {
    const rs = [await replica("close"), await replica("close"), await replica("close")];
    const h = await haproxyOver(rs);
    expect([0, 502]).toContain(await post(h).then((r) => r.status, () => 0));
    expect(rs.reduce((n, r) => n + r.hits(), 0)).toBe(1);
  }, 60_000);

  test("a replica that refuses connections (it exited): requests are retried on another before anything was sent, and succeed", async () => {
    const [gone, live] = [await replica("200"), await replica("200")];
    const h = await haproxyOver([gone, live]);
    gone.close();
    // Before the health checks take it out: whatever haproxy sends it fails to connect and goes to the other.
    const statuses = await Promise.all(Array.from({ length: 6 }, () => post(h).then((r) => r.status)));
    expect(statuses).toEqual(Array(6).fill(200));
    expect(live.hits()).toBe(6);
  }, 60_000);
});
