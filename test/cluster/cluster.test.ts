// Three kiln replicas behind haproxy on loopback, sharing Postgres, Redis and an S3 server (build/cluster/launch.ts):
// a team's RPM holds exactly across them, a revoked key is refused by every replica at once, a file uploaded through
// one downloads byte-identical through the others and a replica killed mid-upload leaves no object and no row, and a
// replica sent SIGTERM under load drains while haproxy moves its new requests to the others.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { type Cluster, startCluster } from "../../build/cluster/launch.ts";
import { closeDatabase, type Db, openDatabase } from "../../src/db/client.ts";
import { createKey, revokeKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { patternSha256, rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";

const MiB = 1024 * 1024;
let cluster: Cluster;
let db: Db;

beforeAll(async () => {
  cluster = await startCluster({ replicas: 3, port: 0, modelsDir: dirname(await tinyModelDir()), env: { KILN_THREADS: "1" } });
  db = await openDatabase(tempDir("kiln-cluster-db-"), { url: cluster.databaseUrl });
}, 300_000);

afterAll(async () => {
  await closeDatabase(db);
  await cluster?.stop();
}, 120_000);

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function team(name: string, settings: Parameters<typeof updateTeam>[2] = {}) {
  const t = await createTeam(db, name);
  await updateTeam(db, t.id, settings);
  const k = await createKey(db, t.id, "k");
  return { id: t.id, key: k.key, keyId: k.id };
}

/** Requests to `route` a replica answered so far, from its own /metrics (loopback needs no token). */
async function answered(url: string, route = "/v1/models"): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const series = new RegExp(`^kiln_http_requests_total\\{[^}]*route="${route}"[^}]*\\} (\\d+)`, "gm");
  return [...text.matchAll(series)].reduce((n, m) => n + Number(m[1]), 0);
}

describe("three replicas behind haproxy", () => {
  test("a team at 10 RPM sending 64 concurrent requests through haproxy gets exactly 10, served by several replicas", async () => {
    const t = await team("rpm", { rpmLimit: 10 });
    const before = await Promise.all(cluster.replicas.map((r) => answered(r.url)));
    const answers = await Promise.all(Array.from({ length: 64 }, () => fetch(`${cluster.url}/v1/models`, { headers: auth(t.key) })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(54);
    const after = await Promise.all(cluster.replicas.map((r) => answered(r.url)));
    // haproxy spread them: more than one replica answered, and between them all 64.
    expect(after.filter((n, i) => n > before[i]!).length).toBeGreaterThan(1);
    expect(after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0)).toBe(64);
  });

  test("a key revoked is refused by every replica on the next request", async () => {
    const t = await team("revoked");
    for (const r of cluster.replicas) expect((await fetch(`${r.url}/v1/models`, { headers: auth(t.key) })).status).toBe(200);
    expect(await revokeKey(db, t.keyId)).toBe(true);
    for (const r of cluster.replicas) expect((await fetch(`${r.url}/v1/models`, { headers: auth(t.key) })).status).toBe(401);
  });

  test("a file uploaded through one replica downloads byte-identical through the others", async () => {
    const [a, b, c] = cluster.replicas;
    const up = await rawUpload(a!.url, { key: cluster.key, bytes: 3 * MiB });
    expect(up.status).toBe(200);
    const id = (JSON.parse(up.body) as { id: string }).id;
    for (const r of [b!, c!]) {
      const res = await fetch(`${r.url}/v1/files/${id}/content`, { headers: auth(cluster.key) });
      expect(res.status).toBe(200);
      const sha = new Bun.CryptoHasher("sha256").update(new Uint8Array(await res.arrayBuffer())).digest("hex");
      expect(sha).toBe(patternSha256(3 * MiB));
    }
  });

  test("SIGTERM to one replica under load: no client sees a connection error, haproxy moves new requests, it exits 0", async () => {
    const victim = cluster.replicas[2]!;
    const t = await team("drain");
    const chat = () =>
      fetch(`${cluster.url}/v1/chat/completions`, {
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
    const victim = cluster.replicas[1]!;
    const before = await cluster.s3.keys("files/");
    const cut = await rawUpload(victim.url, {
      key: cluster.key, bytes: 64 * MiB,
      interrupt: {
        after: 16 * MiB, then: "close",
        until: async () => {
          await waitFor(() => cluster.s3.openUploads().flatMap((u) => cluster.s3.storedParts(u)), { what: "a stored part", until: (p) => p.length >= 1 });
          await victim.kill9();
        },
      },
    });
    expect(cut.status).toBe(0);
    expect(await cluster.s3.keys("files/")).toEqual(before);
    const listed = (await (await fetch(`${cluster.replicas[0]!.url}/v1/files`, { headers: auth(cluster.key) })).json()) as { data: { id: string }[] };
    expect(listed.data.map((f) => `files/${f.id}`).sort()).toEqual([...before].sort());
  }, 120_000);
});
