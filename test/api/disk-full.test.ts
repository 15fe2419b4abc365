// A kiln whose data dir is on a small disk that fills up (a 64 MiB tmpfs; needs root): an upload larger than the
// room left stops with a 503 saying the storage is full and leaves nothing, a small one still fits; once the disk is
// full, uploads, chat and stored Responses requests are refused up front with that 503 (their usage could be recorded
// nowhere, so none is served unbilled), the status page says so and is not alive; freed again, everything works.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { canFaultStorage, smallDisk } from "../helpers/storage-faults.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess } from "../load/server-process.ts";

const MiB = 1024 * 1024;

const storageFull = {
  error: { message: expect.stringContaining("storage is full"), type: "server_error", param: null, code: "backend_unavailable" },
};

describe.if(canFaultStorage())("the data dir's disk full", () => {
  test("uploads, chat and stored responses get a 503 saying so and leave nothing; the status page is not alive until space is freed", async () => {
    const disk = smallDisk(64);
    const server = await startServerProcess({ dataDir: disk.dir, modelsDir: dirname(await tinyModelDir()) });
    const db = new Database(join(disk.dir, "kiln.db"), { readonly: true });
    const keyed = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
    const status = async () => (await (await fetch(`${server.url}/v1/status`)).json()) as { is_alive: boolean; service_status: string; service_message: string };
    const usageRows = () => (db.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n;
    try {
      const model = ((await (await fetch(`${server.url}/v1/models`, { headers: keyed })).json()) as { data: { id: string }[] }).data[0]!.id;
      const chat = () => fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: keyed, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 4 }) });

      const big = await rawUpload(server.url, { key: server.key, bytes: 100 * MiB });
      expect(big.status).toBe(503);
      expect(JSON.parse(big.body)).toEqual(storageFull);
      expect(Number(big.headers["retry-after"])).toBeGreaterThan(0);
      expect(readdirSync(join(disk.dir, "files", "tmp"))).toEqual([]);
      const small = await rawUpload(server.url, { key: server.key, bytes: 4096 });
      expect(small.status).toBe(200);

      disk.fill(MiB);
      const refused = await rawUpload(server.url, { key: server.key, bytes: 4096 });
      expect([refused.status, JSON.parse(refused.body)]).toEqual([503, storageFull]);
      const rowsBefore = usageRows();
      const chatRes = await chat();
      expect([chatRes.status, await chatRes.json()]).toEqual([503, storageFull]);
      const stored = await fetch(`${server.url}/v1/responses`, { method: "POST", headers: keyed, body: JSON.stringify({ model, input: "hi", max_output_tokens: 16, stream: true }) });
      expect([stored.status, await stored.json()]).toEqual([503, storageFull]);
      expect(usageRows()).toBe(rowsBefore);
      expect((db.query("SELECT count(*) AS n FROM responses").get() as { n: number }).n).toBe(0);
      expect(await status()).toMatchObject({ is_alive: false, service_status: "outage", service_message: expect.stringContaining("disk is full") });
      expect(readdirSync(join(disk.dir, "files", "tmp"))).toEqual([]);

      disk.unfill();
      expect(await status()).toMatchObject({ is_alive: true, service_status: "operational" });
      expect((await chat()).status).toBe(200);
      await waitFor(usageRows, { what: "the chat's usage row", until: (n) => n === rowsBefore + 1 });
    } finally {
      db.close();
      await server.stop();
      disk.unmount();
    }
  }, 120_000);
});
