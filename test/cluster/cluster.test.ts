// Four kiln replicas behind haproxy on loopback, sharing Postgres, Redis and an S3 server (build/cluster/launch.ts):
// what one replica tells a user holds on the others (a key made in the dashboard is shown on the page after the
// redirect, whichever replica serves it), sign-ins are limited per client and name across them, /metrics is not open
// through the proxy, a team's RPM holds exactly across them, a revoked key is refused by every replica at once, a file uploaded through
// one downloads byte-identical through the others and a replica killed mid-upload leaves no object and no row, a
// replica killed with background jobs has them ended or run by the others while a follower's stream goes on, and a
// replica sent SIGTERM under load drains while haproxy moves its new requests to the others.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { revokeKey } from "../../src/db/keys-repo.ts";
import { addUser, DashboardClient, hiddenField } from "../helpers/dashboard-client.ts";
import { httpRequest, rawRequest } from "../helpers/raw-http.ts";
import { patternSha256, rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { clusterPerFile } from "./cluster-per-file.ts";

const MiB = 1024 * 1024;
const cl = clusterPerFile(4);

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

/** Requests to `route` a replica answered so far, from its own /metrics (loopback needs no token). */
async function answered(url: string, route = "/v1/models"): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const series = new RegExp(`^kiln_http_requests_total\\{[^}]*route="${route}"[^}]*\\} (\\d+)`, "gm");
  return [...text.matchAll(series)].reduce((n, m) => n + Number(m[1]), 0);
}

type Json = Record<string, any>;

/** The events of an SSE text, in order. */
function sseEvents(text: string): Json[] {
  return text.split("\n\n").flatMap((frame) => {
    const data = frame.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
    return data ? [JSON.parse(data) as Json] : [];
  });
}

/** Each response's status and lease owner, straight from Postgres. */
async function leases(ids: string[]): Promise<Map<string, { status: string; owner: string | null }>> {
  if (cl.db.dialect !== "postgres") throw new Error("the cluster runs on Postgres");
  const rows = (await cl.db.pg.execute(sql`SELECT id, status, lease_owner FROM responses WHERE id IN ${ids}`)) as unknown as { id: string; status: string; lease_owner: string | null }[];
  return new Map(rows.map((r) => [r.id, { status: r.status, owner: r.lease_owner }]));
}

/** One sign-in through haproxy from the loopback address `from` (another client to haproxy): the form, then the post; its status. */
async function signInFrom(from: string, username: string, password: string): Promise<number> {
  const port = Number(new URL(cl.cluster.url).port);
  const form = await rawRequest(port, httpRequest("GET", "/dashboard/login"), 10_000, from);
  const cookie = /kiln_login=([^;]+)/.exec(form.headers["set-cookie"] ?? "")![1]!;
  const body = new URLSearchParams({ _login: hiddenField(form.body, "_login")!, username, password, next: "/dashboard" }).toString();
  const headers = { cookie: `kiln_login=${cookie}`, "content-type": "application/x-www-form-urlencoded" };
  return (await rawRequest(port, httpRequest("POST", "/dashboard/login", { headers, body }), 10_000, from)).status;
}

describe("what a user is told, and who may sign in, hold through haproxy", () => {
  test("six keys created in the dashboard through haproxy: the page after each redirect shows that key, whole and working", async () => {
    const t = await cl.team("dashboard-keys");
    const pw = await addUser(cl.db, "keys-member", "member", t.id);
    const c = new DashboardClient((r) => fetch(r, { redirect: "manual" }), cl.cluster.url);
    expect((await c.signIn("keys-member", pw)).status).toBe(303);
    const shown: string[] = [];
    for (let i = 1; i <= 6; i++) {
      await c.get(`/dashboard/teams/${t.id}/keys`);
      const made = await c.post(`/dashboard/teams/${t.id}/keys`, { name: `cluster-key-${i}` });
      expect(made.status).toBe(303);
      const next = await c.get(made.location!);
      const panels = [...next.text.matchAll(/<h2 id="new-key[^"]*-title">Your new key "([^"]+)"<\/h2>[\s\S]*?<code id="new-key[^"]*" data-key-id="\d+">([^<]+)<\/code>/g)];
      expect(panels.map((p) => p[1])).toEqual([`cluster-key-${i}`]);
      shown.push(panels[0]![2]!);
    }
    // Each key shown is the whole key: it authenticates, through haproxy, as the team's.
    for (const key of shown) expect((await fetch(`${cl.cluster.url}/v1/models`, { headers: auth(key) })).status).toBe(200);
    // The pages went to more than one replica (haproxy spreads them), and none showed a key twice.
    expect(new Set(shown).size).toBe(6);
  }, 120_000);

  test("sign-ins are counted per client and name across the replicas: a stranger's failures lock out neither the operator nor another client", async () => {
    const pw = await addUser(cl.db, "cluster-admin", "operator", null);
    // 60 failed sign-ins with random names from one client: that client is limited (20 a minute, whichever replica)...
    const spray: number[] = [];
    for (let i = 0; i < 60; i++) spray.push(await signInFrom("127.0.0.2", `nobody-${crypto.randomUUID().slice(0, 8)}`, "wrong password here"));
    expect(spray.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(spray.slice(20)).toEqual(Array(40).fill(429));
    // ...and the operator, from another client, signs in.
    expect(await signInFrom("127.0.0.3", "cluster-admin", pw)).toBe(303);
    // Eight wrong passwords for the operator from one client: five 401s, then 429, however many replicas they reach.
    const guesses: number[] = [];
    for (let i = 0; i < 8; i++) guesses.push(await signInFrom("127.0.0.4", "cluster-admin", `wrong password ${i}`));
    expect(guesses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(await signInFrom("127.0.0.4", "cluster-admin", pw)).toBe(429);
    // A name that is no account's answers the same from there.
    const unknown: number[] = [];
    for (let i = 0; i < 6; i++) unknown.push(await signInFrom("127.0.0.5", "cluster-nobody", `wrong password ${i}`));
    expect(unknown).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await signInFrom("127.0.0.6", "cluster-admin", pw)).toBe(303);
  }, 180_000);

  test("/metrics through haproxy needs the token (a forwarded request is not a loopback one); on a replica's own port it is open to loopback", async () => {
    const via = await fetch(`${cl.cluster.url}/metrics`);
    expect(via.status).toBe(404);
    expect(await via.text()).toBe("");
    expect((await fetch(`${cl.cluster.replicas[0]!.url}/metrics`)).status).toBe(200);
  });
});

describe("replicas behind haproxy", () => {
  test("a team at 10 RPM sending 64 concurrent requests through haproxy gets exactly 10, served by several replicas", async () => {
    const t = await cl.team("rpm", { rpmLimit: 10 });
    const before = await Promise.all(cl.cluster.replicas.map((r) => answered(r.url)));
    const answers = await Promise.all(Array.from({ length: 64 }, () => fetch(`${cl.cluster.url}/v1/models`, { headers: auth(t.key) })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(54);
    const after = await Promise.all(cl.cluster.replicas.map((r) => answered(r.url)));
    // haproxy spread them: more than one replica answered, and between them all 64.
    expect(after.filter((n, i) => n > before[i]!).length).toBeGreaterThan(1);
    expect(after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)).toBe(64);
  });

  test("a key revoked is refused by every replica on the next request", async () => {
    const t = await cl.team("revoked");
    for (const r of cl.cluster.replicas) expect((await fetch(`${r.url}/v1/models`, { headers: auth(t.key) })).status).toBe(200);
    expect(await revokeKey(cl.db, t.keyId)).toBe(true);
    for (const r of cl.cluster.replicas) expect((await fetch(`${r.url}/v1/models`, { headers: auth(t.key) })).status).toBe(401);
  });

  test("a file uploaded through one replica downloads byte-identical through the others", async () => {
    const [a, b, c] = cl.cluster.replicas;
    const up = await rawUpload(a!.url, { key: cl.cluster.key, bytes: 3 * MiB });
    expect(up.status).toBe(200);
    const id = (JSON.parse(up.body) as { id: string }).id;
    for (const r of [b!, c!]) {
      const res = await fetch(`${r.url}/v1/files/${id}/content`, { headers: auth(cl.cluster.key) });
      expect(res.status).toBe(200);
      const sha = new Bun.CryptoHasher("sha256").update(new Uint8Array(await res.arrayBuffer())).digest("hex");
      expect(sha).toBe(patternSha256(3 * MiB));
    }
  });

  test("kill -9 of a replica running background jobs: another fails the running ones and runs the queued ones within 10 s; a follower's stream through another replica has no gap and no duplicate", async () => {
    const [b, , , a] = cl.cluster.replicas;
    const t = await cl.team("takeover");
    const create = (url: string, body: Json) =>
      fetch(`${url}/v1/responses`, { method: "POST", headers: { ...auth(t.key), "content-type": "application/json" }, body: JSON.stringify({ model: "kiln-tiny-v1", input: "Hello", temperature: 0, background: true, ...body }) });
    // The greedy tiny model never ends this prompt: a job runs to its max_output_tokens and ends incomplete (having run).
    // The first job streams to its creator; A's 16 slots (the tiny model's max_batch, one worker) are then filled with long jobs.
    const first = await create(a!.url, { stream: true, max_output_tokens: 4000 });
    const reader = first.body!.getReader();
    let head = "";
    while (!head.includes("response.created")) head += new TextDecoder().decode((await reader.read()).value);
    const firstId = /"id":"(resp_[^"]+)"/.exec(head)![1]!;
    void (async () => {
      while (!(await reader.read().catch(() => ({ done: true }))).done);
    })();
    const long = [firstId];
    for (let i = 1; i < 16; i++) long.push(((await (await create(a!.url, { max_output_tokens: 4000 })).json()) as Json).id);
    await waitFor(async () => [...(await leases(long)).values()].every((r) => r.status === "in_progress"), { what: "A's slots all busy" });
    const queued: string[] = [];
    for (let i = 0; i < 3; i++) queued.push(((await (await create(a!.url, { max_output_tokens: 16 })).json()) as Json).id);
    const ownerA = (await leases([firstId])).get(firstId)!.owner;
    expect([...(await leases(queued)).values()].map((r) => [r.status, r.owner])).toEqual(queued.map(() => ["queued", ownerA]));
    // A follower of the first job through B, from its first event, is hearing its deltas when A dies.
    const follower = (await fetch(`${b!.url}/v1/responses/${firstId}?stream=true`, { headers: auth(t.key) })).body!.getReader();
    let followed = "";
    const decoder = new TextDecoder();
    const following = (async () => {
      for (let r = await follower.read(); !r.done; r = await follower.read()) followed += decoder.decode(r.value, { stream: true });
    })();
    await waitFor(() => followed.includes("response.output_text.delta"), { what: "the follower hearing deltas" });
    const killedAt = performance.now();
    await a!.kill9();
    const all = [...long, ...queued];
    const settled = await waitFor(async () => Object.fromEntries(await leases(all)), {
      what: "the killed replica's jobs ended by the others",
      until: (now) => long.every((id) => now[id]!.status === "failed") && queued.every((id) => now[id]!.status === "incomplete"),
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    expect(performance.now() - killedAt).toBeLessThan(10_000);
    for (const id of all) expect(settled[id]!.owner).not.toBe(ownerA);
    const failed = (await (await fetch(`${cl.cluster.url}/v1/responses/${firstId}`, { headers: auth(t.key) })).json()) as Json;
    expect(failed.error).toEqual({ code: "server_error", message: "kiln restarted while this background response was running; create it again." });
    await following;
    const events = sseEvents(followed);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-1)!.type).toBe("response.failed");
    expect(events.filter((e) => e.type === "response.output_text.delta").length).toBeGreaterThan(0);
  }, 120_000);

  test("SIGTERM to one replica under load: no client sees a connection error, haproxy moves new requests, it exits 0", async () => {
    const victim = cl.cluster.replicas[2]!;
    const t = await cl.team("drain");
    const chat = () =>
      fetch(`${cl.cluster.url}/v1/chat/completions`, {
        method: "POST",
        headers: { ...auth(t.key), "content-type": "application/json" },
        body: JSON.stringify({ model: "kiln-tiny-v1", messages: [{ role: "user", content: "Hello" }], max_tokens: 16, temperature: 0 }),
      }).then(
        async (r) => (r.status === 200 ? 200 : `${r.status} ${(await r.text()).slice(0, 200)}`),
        (e: unknown) => `connection error: ${String(e)}`,
      );
    // Clients keep a steady load on while the victim drains and exits.
    let running = true;
    const outcomes: (number | string)[] = [];
    const clients = Array.from({ length: 6 }, async () => {
      while (running) outcomes.push(await chat());
    });
    // The victim is serving its share when it gets SIGTERM.
    await waitFor(async () => outcomes.length >= 12 && (await answered(victim.url, "/v1/chat/completions")) >= 2, { what: "load under way on the victim" });
    const code = await victim.stop();
    const afterExit = outcomes.length;
    await waitFor(() => outcomes.length >= afterExit + 12, { what: "requests after the victim exited" });
    running = false;
    await Promise.all(clients);
    expect(code).toBe(0);
    expect(outcomes.filter((o) => o !== 200)).toEqual([]);
  }, 120_000);

  test("a replica killed mid-upload leaves no object and no row; the others go on serving files", async () => {
    const victim = cl.cluster.replicas[1]!;
    const before = await cl.cluster.s3.keys("files/");
    const cut = await rawUpload(victim.url, {
      key: cl.cluster.key, bytes: 64 * MiB,
      interrupt: {
        after: 16 * MiB, then: "close",
        until: async () => {
          await waitFor(() => cl.cluster.s3.openUploads().flatMap((u) => cl.cluster.s3.storedParts(u)), { what: "a stored part", until: (p) => p.length >= 1 });
          await victim.kill9();
        },
      },
    });
    expect(cut.status).toBe(0);
    expect(await cl.cluster.s3.keys("files/")).toEqual(before);
    const listed = (await (await fetch(`${cl.cluster.replicas[0]!.url}/v1/files`, { headers: auth(cl.cluster.key) })).json()) as { data: { id: string }[] };
    expect(listed.data.map((f) => `files/${f.id}`).sort()).toEqual([...before].sort());
  }, 120_000);
});
