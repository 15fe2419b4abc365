// An upload cut by kill -9 of a real kiln process leaves nothing once kiln starts again: the partial temp file is
// swept at start-up, no row was ever written, and bytes a crash left without a row are removed too; finished
// uploads are untouched.
import { describe, expect, test } from "bun:test";
import { copyFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { newFileId } from "../../src/files/file-id.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess, type ServerProcess } from "../load/server-process.ts";

const MiB = 1024 * 1024;

async function fileIds(server: ServerProcess): Promise<string[]> {
  const res = await fetch(`${server.url}/v1/files`, { headers: { authorization: `Bearer ${server.key}` } });
  return ((await res.json()) as { data: { id: string }[] }).data.map((f) => f.id);
}

describe("uploads and kill -9", () => {
  test("an upload cut by kill -9 leaves no file, no temp file and no row after a restart; finished files survive", async () => {
    const dataDir = tempDir();
    const files = join(dataDir, "files");
    const modelsDir = dirname(await tinyModelDir());
    const env = { KILN_THREADS: "1" };
    const first = await startServerProcess({ dataDir, modelsDir, env });
    const kept = await rawUpload(first.url, { key: first.key, bytes: 3000 });
    expect(kept.status).toBe(200);
    const keptId = JSON.parse(kept.body).id as string;

    const partSize = () => readdirSync(join(files, "tmp")).map((n) => statSync(join(files, "tmp", n)).size);
    const cut = await rawUpload(first.url, {
      key: first.key, bytes: 64 * MiB,
      interrupt: {
        after: 16 * MiB, then: "close",
        // The server has written part of the file to its temp file when it is killed.
        until: async () => {
          await waitFor(partSize, { what: "a partly written temp file", until: (s) => s.length === 1 && s[0]! >= MiB });
          await first.kill9();
        },
      },
    });
    expect(cut.status).toBe(0);
    expect(partSize().length).toBe(1);
    // A crash between the rename and the row's insert would leave bytes no row names.
    const orphan = newFileId();
    copyFileSync(join(files, keptId), join(files, orphan));

    const second = await startServerProcess({ dataDir, modelsDir, env, key: first.key });
    try {
      expect(readdirSync(join(files, "tmp"))).toEqual([]);
      expect(readdirSync(files).sort()).toEqual([keptId, "tmp"].sort());
      expect(await fileIds(second)).toEqual([keptId]);
      const content = await fetch(`${second.url}/v1/files/${keptId}/content`, { headers: { authorization: `Bearer ${second.key}` } });
      expect((await content.arrayBuffer()).byteLength).toBe(3000);
    } finally {
      expect(await second.stop()).toBe(0);
    }
  }, 300_000);
});
