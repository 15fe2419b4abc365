// A kiln process keeping files in S3, killed with kill -9 mid-upload (a replica dying): no object and no row, before
// and after a restart; a finished upload survives. The multipart upload it left open is all that remains: this test
// server does not implement ListMultipartUploads, so the restart's sweep says it could not look for it.
import { describe, expect, test } from "bun:test";
import { dirname } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { startS3Server } from "../helpers/s3-server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

const MiB = 1024 * 1024;

async function fileIds(server: ServerProcess): Promise<string[]> {
  const res = await fetch(`${server.url}/v1/files`, { headers: { authorization: `Bearer ${server.key}` } });
  return ((await res.json()) as { data: { id: string }[] }).data.map((f) => f.id);
}

describe("S3 uploads and kill -9", () => {
  test("an upload cut by kill -9 leaves no object and no row, then or after a restart; a finished one survives", async () => {
    const s3 = await startS3Server();
    const dataDir = tempDir();
    const modelsDir = dirname(await tinyModelDir());
    const env = { KILN_THREADS: "1", ...s3.env };
    try {
      const first = await startServerProcess({ dataDir, modelsDir, env });
      const kept = await rawUpload(first.url, { key: first.key, bytes: 3000 });
      expect(kept.status).toBe(200);
      const keptId = JSON.parse(kept.body).id as string;

      const cut = await rawUpload(first.url, {
        key: first.key, bytes: 64 * MiB,
        interrupt: {
          after: 16 * MiB, then: "close",
          // Killed once the store holds a part of the upload.
          until: async () => {
            await waitFor(() => s3.openUploads().flatMap((u) => s3.storedParts(u)), { what: "a stored part", until: (p) => p.length >= 1 });
            await first.kill9();
          },
        },
      });
      expect(cut.status).toBe(0);
      expect(await s3.keys("files/")).toEqual([`files/${keptId}`]);
      const [open] = s3.openUploads();
      expect(open).toBeDefined();

      const second = await startServerProcess({ dataDir, modelsDir, env, key: first.key });
      try {
        expect(await fileIds(second)).toEqual([keptId]);
        expect(await s3.keys("files/")).toEqual([`files/${keptId}`]);
        const content = await fetch(`${second.url}/v1/files/${keptId}/content`, { headers: { authorization: `Bearer ${second.key}` } });
        expect((await content.arrayBuffer()).byteLength).toBe(3000);
        expect(s3.openUploads()).toEqual([open!]);
        expect(second.log()).toContain("file storage sweep could not check everything");
        expect(second.log()).not.toContain(s3.secretAccessKey);
      } finally {
        expect(await second.stop()).toBe(0);
      }
    } finally {
      await s3.stop();
    }
  }, 300_000);
});
