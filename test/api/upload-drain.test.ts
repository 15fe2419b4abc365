// SIGTERM while an upload's body is still arriving: the drain cuts it at once (its end cannot be counted on within the
// grace period), the client gets its 503 server_shutting_down, the partial file is gone before the process exits,
// and the process does not wait out the grace period for it.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess } from "../load/server-process.ts";

const MiB = 1024 * 1024;

describe("SIGTERM during an upload", () => {
  test("the upload gets 503 server_shutting_down, its .part is removed, and the drain does not wait out the grace period", async () => {
    const dataDir = tempDir();
    const graceMs = 20_000;
    const server = await startServerProcess({ dataDir, modelsDir: dirname(await tinyModelDir()), env: { KILN_SHUTDOWN_GRACE_MS: String(graceMs) } });
    const tmp = join(dataDir, "files", "tmp");
    // The client sends 2 MiB of a 64 MiB file, then waits: the answer must come without the rest.
    const upload = rawUpload(server.url, { key: server.key, bytes: 64 * MiB, interrupt: { after: 2 * MiB, until: () => new Promise(() => {}), then: "resume" } });
    await waitFor(() => readdirSync(tmp).filter((n) => n.endsWith(".part")).length, { what: "the upload's .part file" });

    const t0 = performance.now();
    const exited = server.stop();
    const res = await upload;
    expect(res.status).toBe(503);
    expect(JSON.parse(res.body)).toEqual({ error: { message: expect.any(String), type: "server_error", param: null, code: "server_shutting_down" } });
    expect(Number(res.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    expect(await exited).toBe(0);
    expect(performance.now() - t0).toBeLessThan(graceMs / 2);
    expect(readdirSync(tmp)).toEqual([]);
    expect(readdirSync(join(dataDir, "files")).filter((n) => n !== "tmp")).toEqual([]);
  }, 60_000);
});
