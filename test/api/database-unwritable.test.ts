// SQLite's files made unwritable mid-generation (chattr +i on kiln.db, -wal and -shm; needs root). Before, the next
// write through the mapped -shm was a SIGBUS that killed the server with no log line. Now the process lives on: every
// stream ends with its format's terminal event (a stored Responses stream with the error event, since it can no
// longer be stored; chat needs no database until it settles, and its usage goes to the settlement journal), keyed
// requests get a 503 saying the storage cannot be written, and the status page (haproxy's health check) is not alive.
// Writable again, the server serves, and every request that ran has its usage row.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { dirname, join } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { canFaultStorage, setImmutable } from "../helpers/storage-faults.ts";
import { StreamText } from "../helpers/stream-text.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { startServerProcess } from "../load/server-process.ts";

/** The last SSE frame of a stream's text: its `event:` (if any) and `data:`. */
function lastFrame(text: string): { event: string | null; data: string } {
  const frame = text.trim().split("\n\n").at(-1)!;
  const event = /^event: (.*)$/m.exec(frame)?.[1] ?? null;
  return { event, data: /^data: (.*)$/m.exec(frame)?.[1] ?? "" };
}

describe.if(canFaultStorage())("the database made unwritable mid-generation", () => {
  test("the process lives; each stream ends with its terminal event; keyed requests get a 503; the status page is not alive", async () => {
    const dataDir = tempDir();
    const server = await startServerProcess({ dataDir, modelsDir: dirname(await tinyModelDir()), env: { KILN_THREADS: "1" } });
    const files = ["kiln.db", "kiln.db-wal", "kiln.db-shm"].map((f) => join(dataDir, f));
    const keyed = { authorization: `Bearer ${server.key}`, "content-type": "application/json" };
    const post = (path: string, body: unknown) => fetch(`${server.url}${path}`, { method: "POST", headers: keyed, body: JSON.stringify(body) });
    try {
      const model = ((await (await fetch(`${server.url}/v1/models`, { headers: keyed })).json()) as { data: { id: string }[] }).data[0]!.id;
      const chats = await Promise.all([0, 1, 2].map(() => post("/v1/chat/completions", { model, messages: [{ role: "user", content: "count" }], max_tokens: 600, ignore_eos: true, stream: true })));
      const stored = await Promise.all([0, 1, 2].map(() => post("/v1/responses", { model, input: "Hello", temperature: 0, max_output_tokens: 3000, stream: true })));
      const streams = [...chats, ...stored].map((res) => {
        expect(res.status).toBe(200);
        return new StreamText(res);
      });
      // Every stream is under way: chat has sent a chunk, each stored response an output delta.
      await Promise.all(streams.map((s, i) => s.until(i < 3 ? "chat.completion.chunk" : "response.output_text.delta")));

      setImmutable(files, true);
      const ends = await Promise.all(streams.map((s) => s.rest().then(lastFrame)));
      for (const end of ends.slice(0, 3)) expect(end.data === "[DONE]" || end.data.includes('"error"')).toBe(true);
      for (const end of ends.slice(3)) {
        expect(end.event).toBe("error");
        expect(JSON.parse(end.data)).toMatchObject({ type: "error", code: "backend_unavailable", message: expect.stringContaining("cannot write to its storage") });
      }

      const status = (await (await fetch(`${server.url}/v1/status`)).json()) as Record<string, unknown>;
      expect(status).toMatchObject({ is_alive: false, service_status: "outage", service_message: expect.stringContaining("cannot write to its database") });
      const models = await fetch(`${server.url}/v1/models`, { headers: keyed });
      expect(models.status).toBe(503);
      expect(((await models.json()) as { error: { code: string } }).error.code).toBe("backend_unavailable");

      setImmutable(files, false);
      expect(((await (await fetch(`${server.url}/v1/status`)).json()) as { is_alive: boolean }).is_alive).toBe(true);
      const after = await post("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }], max_tokens: 4 });
      expect(after.status).toBe(200);
    } finally {
      setImmutable(files, false);
    }
    expect(await server.stop()).toBe(0);
    // Each of the seven requests that ran has its usage row: those refused by the database were journaled, then replayed.
    const db = new Database(join(dataDir, "kiln.db"), { readonly: true });
    try {
      await waitFor(() => (db.query("SELECT count(*) AS n FROM usage").get() as { n: number }).n, { what: "seven usage rows", until: (n) => n === 7 });
    } finally {
      db.close();
    }
  }, 120_000);
});
