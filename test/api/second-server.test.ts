// One data dir, one server: a second kiln started on the data dir of a running one refuses to start, naming the first,
// and leaves the first's work alone (its in-flight upload completes); once the first is gone (SIGKILL, no clean-up),
// the next start takes its lock over.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess } from "../load/server-process.ts";

/** `kiln serve` on `dataDir` that is expected not to start: its exit code and what it printed. */
async function refusedStart(dataDir: string, modelsDir: string): Promise<{ code: number; stderr: string }> {
  const root = join(import.meta.dir, "..", "..");
  const proc = Bun.spawn([process.execPath, join(root, "src", "main.ts"), "serve", "--port", "0", "--data-dir", dataDir, "--models-dir", modelsDir], {
    cwd: root, stdout: "pipe", stderr: "pipe", env: { ...process.env, KILN_BUILTIN_MODELS: "kiln-tiny-v1" },
  });
  const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  clearTimeout(timer);
  return { code, stderr };
}

describe("a second kiln on the same data dir", () => {
  test("refuses to start, naming the first, whose upload in flight completes; after the first is killed the next start takes over", async () => {
    const dataDir = tempDir();
    const modelsDir = dirname(await tinyModelDir());
    const first = await startServerProcess({ dataDir, modelsDir });
    const tmp = join(dataDir, "files", "tmp");
    let release!: () => void;
    const resumed = new Promise<void>((r) => (release = r));
    const upload = rawUpload(first.url, { key: first.key, bytes: 3 * 1024 * 1024, interrupt: { after: 1024 * 1024, until: () => resumed, then: "resume" } });
    try {
      await waitFor(() => readdirSync(tmp).length, { what: "the first server's upload to be under way" });

      const second = await refusedStart(dataDir, modelsDir);
      expect(second.code).toBe(2);
      expect(second.stderr).toContain(`in use by another kiln (pid ${first.pid}`);

      release();
      const res = await upload;
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ object: "file", bytes: 3 * 1024 * 1024 });
      expect((await fetch(`${first.url}/v1/status`)).status).toBe(200);
    } finally {
      release();
      await first.kill9();
    }
    const third = await startServerProcess({ dataDir, modelsDir, key: first.key });
    try {
      const files = await fetch(`${third.url}/v1/files`, { headers: { authorization: `Bearer ${first.key}` } });
      expect(((await files.json()) as { data: unknown[] }).data).toHaveLength(1);
    } finally {
      expect(await third.stop()).toBe(0);
    }
  }, 120_000);
});
