// The Files API through the official openai client against a real kiln: upload (small and 20 MiB), list (order,
// paging, purpose), retrieve, download, delete, 404 file_not_found, team isolation, 401 without a key, the text/plain
// 400 for a bad order, and ids that try to reach outside the files directory.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { findFile } from "../../src/db/files-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { openaiTestServer } from "../helpers/openai-server.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";
import type { TestServer } from "../helpers/server.ts";
import { patternSlice } from "../helpers/upload-client.ts";
import { sqliteOf } from "../helpers/databases.ts";

const MiB = 1024 * 1024;
let server: TestServer;
let client: OpenAI;
let stranger: OpenAI;
let teamId: number;

beforeAll(async () => {
  ({ server, client } = await openaiTestServer());
  teamId = (sqliteOf(server.deps.db).$client.query("SELECT team_id AS t FROM api_keys ORDER BY id LIMIT 1").get() as { t: number }).t;
  const other = await createKey(server.deps.db, (await createTeam(server.deps.db, "other-team")).id, "other");
  stranger = new OpenAI({ apiKey: other.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(() => server.stop(1000));

const stored = (id: string) => join(server.deps.config.dataDir, "files", id);
const raw = (path: string, init: RequestInit & { key?: string | null } = {}) =>
  fetch(`${server.url}${path}`, { ...init, headers: { ...(init.key === null ? {} : { authorization: `Bearer ${init.key ?? server.key}` }), ...(init.headers as Record<string, string>) } });

/** The wire object, without the request id the client adds. */
function wire(o: object): Record<string, unknown> {
  const { _request_id: _, ...rest } = o as Record<string, unknown>;
  return rest;
}

/** What the client threw: status, type and code; 200 when it did not throw. */
async function failure(p: Promise<unknown>): Promise<{ status: number; type?: string; code?: string | null }> {
  try {
    await p;
    return { status: 200 };
  } catch (e) {
    if (!(e instanceof OpenAI.APIError)) throw e;
    return { status: e.status ?? -1, type: e.type, code: e.code };
  }
}

async function upload(name: string, purpose: OpenAI.FilePurpose = "user_data", bytes: Uint8Array = new TextEncoder().encode(name)) {
  return client.files.create({ file: await toFile(bytes, name), purpose });
}

async function metric(name: string): Promise<number> {
  return sampleValue(parsePrometheusText(await (await fetch(`${server.url}/metrics`)).text()), name);
}

describe("Files API through the openai client", () => {
  test("a small and a 20 MiB upload: the file objects, the stored bytes and the rows; retrieve and download give them back", async () => {
    const t0 = Math.floor(Date.now() / 1000);
    const small = await client.files.create({ file: await toFile(Buffer.from("hello kiln\n"), "hello.txt"), purpose: "assistants" });
    expect(small.id).toMatch(/^file-[0-9a-f]{32}$/);
    expect(small).toMatchObject({ object: "file", bytes: 11, filename: "hello.txt", purpose: "assistants", status: "processed" });
    expect(small.created_at).toBeGreaterThanOrEqual(t0);

    const content = patternSlice(0, 20 * MiB);
    const big = await client.files.create({ file: await toFile(content, "big.bin"), purpose: "user_data" });
    expect(big).toMatchObject({ object: "file", bytes: 20 * MiB, filename: "big.bin", purpose: "user_data", status: "processed" });
    expect(statSync(stored(big.id)).size).toBe(20 * MiB);
    expect((await findFile(server.deps.db, big.id, teamId))?.bytes).toBe(20 * MiB);
    expect(readdirSync(join(server.deps.config.dataDir, "files", "tmp"))).toEqual([]);

    expect(wire(await client.files.retrieve(big.id))).toEqual(wire(big));
    const res = await client.files.content(big.id);
    expect([res.headers.get("content-type"), res.headers.get("content-length")]).toEqual(["application/octet-stream", String(20 * MiB)]);
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), content)).toBe(0);
    expect(await (await client.files.content(small.id)).text()).toBe("hello kiln\n");
  });

  test("list: newest first by default, asc on request, paged by the client with after and limit, filtered by purpose", async () => {
    const mine = [];
    for (const purpose of ["vision", "batch", "vision"] as const) mine.push((await upload(`${purpose}.dat`, purpose)).id);
    const desc = (await client.files.list()).data.map((f) => f.id);
    const asc = (await client.files.list({ order: "asc" })).data.map((f) => f.id);
    expect(desc.length).toBeGreaterThanOrEqual(5);
    expect(asc).toEqual([...desc].reverse());
    // Uploads within the same second keep their upload order.
    expect(asc.slice(-3)).toEqual(mine);
    const paged: string[] = [];
    for await (const f of client.files.list({ order: "asc", limit: 2 })) paged.push(f.id);
    expect(paged).toEqual(asc);
    const page = (await (await raw("/v1/files?order=desc&limit=2")).json()) as { data: { id: string }[]; first_id: string; last_id: string; has_more: boolean };
    expect([page.first_id, page.last_id, page.has_more]).toEqual([desc[0]!, desc[1]!, true]);
    const last = (await (await raw(`/v1/files?order=desc&after=${desc.at(-2)}`)).json()) as typeof page;
    expect([last.data.map((f) => f.id), last.has_more]).toEqual([[desc.at(-1)!], false]);
    expect((await client.files.list({ purpose: "vision", order: "asc" })).data.map((f) => f.id)).toEqual([mine[0]!, mine[2]!]);
    const empty = (await (await raw("/v1/files?purpose=evals")).json()) as typeof page;
    expect(empty).toEqual({ object: "list", data: [], first_id: null, last_id: null, has_more: false } as never);
  });

  test("order=sideways is a 400 with a text/plain body; other bad queries are the JSON error", async () => {
    // The bad order wins whatever else is wrong with the query.
    for (const query of ["order=sideways", "order=sideways&limit=x", "limit=0&order=sideways&purpose=nope&after=x"]) {
      const res = await raw(`/v1/files?${query}`);
      expect([res.status, res.headers.get("content-type"), await res.text()]).toEqual([
        400, "text/plain; charset=utf-8", "Invalid value for 'order': 'sideways'. Expected 'asc' or 'desc'.",
      ]);
    }
    const limit = await raw("/v1/files?limit=10001");
    expect([limit.status, ((await limit.json()) as { error: { message: string } }).error.message]).toEqual([400, "limit must be a whole number from 1 to 10000"]);
    expect((await failure(client.files.list({ after: "file-00000000000000000000000000000000" })))).toMatchObject({ status: 400, type: "invalid_request_error" });
  });

  test("an upload without purpose, with another purpose, or without a file is a 400 naming the field, and stores nothing", async () => {
    const before = readdirSync(join(server.deps.config.dataDir, "files")).length;
    const form = (fields: Record<string, string | Blob>) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) {
        if (v instanceof Blob) f.append(k, v, "a.txt");
        else f.append(k, v);
      }
      return f;
    };
    for (const [fields, param] of [
      [{ file: new Blob(["x"]) }, "purpose"],
      [{ file: new Blob(["x"]), purpose: "training" }, "purpose"],
      [{ purpose: "batch" }, "file"],
    ] as const) {
      const res = await raw("/v1/files", { method: "POST", body: form(fields) });
      const body = (await res.json()) as { error: { param: string; type: string } };
      expect([res.status, body.error.type, body.error.param]).toEqual([400, "invalid_request_error", param]);
    }
    const json = await raw("/v1/files", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(json.status).toBe(400);
    expect(readdirSync(join(server.deps.config.dataDir, "files")).length).toBe(before);
  });

  test("delete removes the row and the bytes; then retrieve, content and delete are 404 file_not_found; /metrics counts it all", async () => {
    const [uploads, bytes, deletes] = await Promise.all(["kiln_file_uploads_total", "kiln_file_upload_bytes_total", "kiln_file_deletes_total"].map(metric));
    const f = await upload("doomed.txt", "evals", new Uint8Array(1000));
    expect(await metric("kiln_file_uploads_total")).toBe(uploads! + 1);
    expect(await metric("kiln_file_upload_bytes_total")).toBe(bytes! + 1000);
    expect(wire(await client.files.delete(f.id))).toEqual({ id: f.id, object: "file", deleted: true });
    expect(await metric("kiln_file_deletes_total")).toBe(deletes! + 1);
    expect(existsSync(stored(f.id))).toBe(false);
    expect(await findFile(server.deps.db, f.id, teamId)).toBeUndefined();
    const gone = { status: 404, type: "invalid_request_error", code: "file_not_found" };
    expect(await failure(client.files.retrieve(f.id))).toEqual(gone);
    expect(await failure(client.files.content(f.id))).toEqual(gone);
    expect(await failure(client.files.delete(f.id))).toEqual(gone);
    expect((await client.files.list()).data.map((x) => x.id)).not.toContain(f.id);
  });

  test("another team's key gets 404 file_not_found on retrieve, content and delete, does not list it, and the file survives", async () => {
    const f = await upload("private.txt", "user_data", new TextEncoder().encode("ours"));
    const gone = { status: 404, type: "invalid_request_error", code: "file_not_found" };
    expect(await failure(stranger.files.retrieve(f.id))).toEqual(gone);
    expect(await failure(stranger.files.content(f.id))).toEqual(gone);
    expect(await failure(stranger.files.delete(f.id))).toEqual(gone);
    expect((await stranger.files.list()).data).toEqual([]);
    expect(await (await client.files.content(f.id)).text()).toBe("ours");
    expect(existsSync(stored(f.id))).toBe(true);
  });

  test("every /v1/files route without a key is 401", async () => {
    const f = await upload("keyed.txt");
    const form = new FormData();
    form.append("purpose", "batch");
    form.append("file", new Blob(["x"]), "x.txt");
    for (const [method, path, body] of [["POST", "/v1/files", form], ["GET", "/v1/files"], ["GET", `/v1/files/${f.id}`], ["GET", `/v1/files/${f.id}/content`], ["DELETE", `/v1/files/${f.id}`]] as const) {
      const res = await raw(path, { method, key: null, ...(body ? { body } : {}) });
      const err = (await res.json()) as { error: { type: string; code: string } };
      expect([method, path, res.status, err.error.type, err.error.code]).toEqual([method, path, 401, "authentication_error", "invalid_api_key"]);
    }
    expect(existsSync(stored(f.id))).toBe(true);
  });

  test("ids that try to reach outside the files directory (dot segments, encoded slashes) reach no file", async () => {
    const f = await upload("target.txt");
    for (const id of ["file-..%2F..%2Fkiln.db", "..%2Fkiln.db", "%2E%2E", "file-%2E%2E%2Fkiln.db", `${f.id}%2F..`, `..%2F${f.id}`, `${f.id}%00`, "file-..", `${f.id.toUpperCase()}`]) {
      for (const path of [`/v1/files/${id}`, `/v1/files/${id}/content`]) {
        const res = await raw(path);
        const text = await res.text();
        expect([path, res.status]).toEqual([path, 404]);
        expect(text).not.toContain("SQLite format");
        // Matched by a route: the spec's JSON 404; otherwise the router's empty one.
        if (text) expect([path, (JSON.parse(text) as { error: { code: string } }).error.code]).toEqual([path, "file_not_found"]);
      }
      expect([id, (await raw(`/v1/files/${id}`, { method: "DELETE" })).status]).toEqual([id, 404]);
    }
    expect(existsSync(join(server.deps.config.dataDir, "kiln.db"))).toBe(true);
    expect(await (await client.files.content(f.id)).text()).toBe("target.txt");
  });
});
