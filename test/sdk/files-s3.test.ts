// The Files API through the official openai client against a real kiln whose files live in an S3 bucket on a real
// S3-compatible server: a 20 MiB upload is one object under files/ (no upload left open) and downloads
// byte-identical, also through another storage reading the same bucket (as another replica would); delete removes
// object and row; an upload cut mid-way leaves no object, no open multipart upload and no row.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI, { toFile } from "openai";
import { findFile } from "../../src/db/files-repo.ts";
import { S3FileStorage } from "../../src/files/s3-storage.ts";
import { openaiTestServer } from "../helpers/openai-server.ts";
import { startS3Server, type TestS3Server } from "../helpers/s3-server.ts";
import type { TestServer } from "../helpers/server.ts";
import { patternSlice, rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

const MiB = 1024 * 1024;
let s3: TestS3Server;
let server: TestServer;
let client: OpenAI;
let teamId: number;

beforeAll(async () => {
  s3 = await startS3Server();
  ({ server, client } = await openaiTestServer(s3.env));
  teamId = (sqliteOf(server.deps.db).$client.query("SELECT team_id AS t FROM api_keys ORDER BY id LIMIT 1").get() as { t: number }).t;
});
afterAll(async () => {
  await server.stop(1000);
  await s3.stop();
});

const fileIds = async () => (await client.files.list()).data.map((f) => f.id).sort();

describe("Files API with files in S3", () => {
  test("a 20 MiB upload is one object in the bucket; it downloads byte-identical, through kiln and through another storage of the bucket", async () => {
    expect(server.logs).toContainEqual(expect.objectContaining({ msg: "file storage", store: "s3", endpoint: s3.endpoint, bucket: s3.bucket }));
    const content = patternSlice(0, 20 * MiB);
    const f = await client.files.create({ file: await toFile(content, "big.bin"), purpose: "user_data" });
    expect(f).toMatchObject({ object: "file", bytes: 20 * MiB, filename: "big.bin", status: "processed" });
    expect(await s3.keys("files/")).toContain(`files/${f.id}`);
    expect(s3.openUploads()).toEqual([]);
    expect((await findFile(server.deps.db, f.id, teamId))?.bytes).toBe(20 * MiB);

    const res = await client.files.content(f.id);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(Buffer.compare(Buffer.from(await res.arrayBuffer()), content)).toBe(0);
    // Another replica reads the same bucket with its own client.
    const other = new S3FileStorage({ ...s3, staleUploadMs: 3_600_000 });
    expect(Buffer.compare(Buffer.from(await (await other.get(f.id))!.bytes()), content)).toBe(0);
  });

  test("delete removes the object and the row; then content is 404 file_not_found", async () => {
    const f = await client.files.create({ file: await toFile(Buffer.from("short-lived"), "doomed.txt"), purpose: "evals" });
    expect(await s3.keys("files/")).toContain(`files/${f.id}`);
    expect(await client.files.delete(f.id)).toMatchObject({ id: f.id, deleted: true });
    expect(await s3.keys("files/")).not.toContain(`files/${f.id}`);
    expect(await findFile(server.deps.db, f.id, teamId)).toBeUndefined();
    const gone = await client.files.content(f.id).then(() => null, (e: unknown) => e);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("an upload cut after parts were stored leaves no object, no open multipart upload and no row", async () => {
    const [objects, rows] = [await s3.keys("files/"), await fileIds()];
    const cut = await rawUpload(server.url, {
      key: server.key, bytes: 64 * MiB,
      interrupt: {
        after: 16 * MiB, then: "close",
        // The client vanishes once the store holds parts of the upload.
        until: () => waitFor(() => s3.openUploads().flatMap((u) => s3.storedParts(u)), { what: "stored parts of the upload", until: (p) => p.length >= 1 }),
      },
    });
    expect(cut.status).toBe(0);
    await waitFor(() => s3.openUploads(), { what: "the multipart upload aborted", until: (u) => u.length === 0 });
    expect(await s3.keys("files/")).toEqual(objects);
    expect(await fileIds()).toEqual(rows);
  });
});
