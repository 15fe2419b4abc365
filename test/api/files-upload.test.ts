// Uploads over a real socket that go wrong: one byte over the size limit (a small limit here, the same code path as
// 1 GiB; the 1 GiB run is `npm run bench -- --upload`), a client that vanishes mid-upload, one that stalls past the
// upload deadline, and one that pauses longer than the idle timeout (which an upload must survive). Each failure
// leaves no file, no temp file and no row.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { RawConnection } from "../helpers/raw-http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { rawUpload } from "../helpers/upload-client.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

const MiB = 1024 * 1024;
let server: TestServer;
/** The default 1 GiB file limit, and a 1.5 s upload deadline. */
let stalling: TestServer;

beforeAll(async () => {
  [server, stalling] = await Promise.all([
    startTestServer({ KILN_MAX_FILE_BYTES: String(MiB), KILN_IDLE_TIMEOUT_S: "1" }),
    startTestServer({ KILN_UPLOAD_TIMEOUT_MS: "1500" }),
  ]);
});
afterAll(() => Promise.all([server.stop(1000), stalling.stop(1000)]));

/** What the server holds for uploads: stored files, temp files, and file rows. */
function left(s: TestServer) {
  const dir = join(s.deps.config.dataDir, "files");
  return {
    stored: readdirSync(dir).filter((n) => n !== "tmp").length,
    temp: readdirSync(join(dir, "tmp")).length,
    rows: (sqliteOf(s.deps.db).$client.query("SELECT count(*) AS n FROM files").get() as { n: number }).n,
  };
}

describe("uploads that go wrong, over a real socket", () => {
  test("a file of exactly the limit is stored; one byte over is a 400 naming the limit, with nothing left, purpose first or last", async () => {
    const at = left(server);
    const ok = await rawUpload(server.url, { key: server.key, bytes: MiB, purposeLast: true });
    expect([ok.status, JSON.parse(ok.body).bytes]).toEqual([200, MiB]);
    for (const purposeLast of [false, true]) {
      const over = await rawUpload(server.url, { key: server.key, bytes: MiB + 1, purposeLast });
      expect([over.status, JSON.parse(over.body)]).toEqual([400, {
        error: { message: "The file is larger than the size limit of 1 MiB.", type: "invalid_request_error", param: "file", code: null },
      }]);
    }
    expect(left(server)).toEqual({ stored: at.stored + 1, temp: 0, rows: at.rows + 1 });
  });

  test("a declared Content-Length past the 1 GiB limit and the form's overhead: 400 naming the limit before any byte is read; 401 without a key", async () => {
    const at = left(stalling);
    const declared = async (headers: Record<string, string>) => {
      const conn = await RawConnection.open(Number(new URL(stalling.url).port));
      try {
        // Headers only: the body is never sent, so an answer can only come from the declared length.
        conn.write(`POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}` +
          `Content-Type: multipart/form-data; boundary=x\r\nContent-Length: ${1024 * MiB + 2 * MiB}\r\n\r\n`);
        const res = await conn.read(10_000);
        return [res.status, res.body && JSON.parse(res.body).error];
      } finally {
        conn.close();
      }
    };
    expect(await declared({ Authorization: `Bearer ${stalling.key}` })).toEqual([400, {
      message: "The file is larger than the size limit of 1 GiB.", type: "invalid_request_error", param: "file", code: null,
    }]);
    expect(await declared({})).toEqual([401, expect.objectContaining({ type: "authentication_error" })]);
    expect(left(stalling)).toEqual(at);
  });

  test("a bad purpose sent before the file is refused at once: the client gets its 400 before sending the file", async () => {
    const at = left(server);
    const answer = Promise.withResolvers<void>();
    const res = await rawUpload(server.url, {
      key: server.key, bytes: MiB, purpose: "training",
      // The client sends 1000 bytes of the file, then waits (5 s at most) for an answer before sending the rest.
      interrupt: { after: 1000, then: "close", until: () => Promise.race([answer.promise, Bun.sleep(5000)]) },
    }).finally(() => answer.resolve());
    expect([res.status, JSON.parse(res.body).error]).toEqual([400, {
      message: "Invalid value for 'purpose': 'training'. Expected one of assistants, batch, fine-tune, vision, user_data, evals.",
      type: "invalid_request_error", param: "purpose", code: null,
    }]);
    expect(left(server)).toEqual(at);
  });

  test("a client that disconnects mid-upload leaves no file, no temp file and no row", async () => {
    const at = left(server);
    const dir = join(server.deps.config.dataDir, "files", "tmp");
    const res = await rawUpload(server.url, {
      key: server.key, bytes: MiB, purposeLast: true,
      // Half the file is sent and the server has started writing it; then the client vanishes.
      interrupt: { after: MiB / 2, then: "close", until: () => waitFor(() => readdirSync(dir).length, { what: "a temp file for the upload" }) },
    });
    expect(res.status).toBe(0);
    await waitFor(() => left(server), { what: "the cut upload cleaned up", until: (l) => l.temp === 0 });
    expect(left(server)).toEqual({ ...at, temp: 0 });
    expect(server.logs.some((l) => l.msg === "unhandled exception")).toBe(false);
  });

  test("an upload that pauses longer than the idle timeout (1 s here) is not cut off", async () => {
    const at = left(server);
    const res = await rawUpload(server.url, { key: server.key, bytes: MiB, interrupt: { after: 1000, then: "resume", until: () => Bun.sleep(6000) } });
    expect([res.status, JSON.parse(res.body).bytes]).toEqual([200, MiB]);
    expect(left(server)).toEqual({ stored: at.stored + 1, temp: 0, rows: at.rows + 1 });
  }, 30_000);

  test("an upload that stalls past the upload deadline gets 408 and leaves nothing", async () => {
    const at = left(stalling);
    let answered = false;
    const res = await rawUpload(stalling.url, {
      key: stalling.key, bytes: MiB, interrupt: { after: 1000, then: "close", until: () => waitFor(() => answered, { what: "the 408", timeoutMs: 10_000 }) },
    }).then((r) => ((answered = true), r));
    expect([res.status, JSON.parse(res.body).error.message, res.headers.connection]).toEqual([408, "The request body was not received within 1.5 s.", "close"]);
    await waitFor(() => left(stalling), { what: "the stalled upload cleaned up", until: (l) => l.temp === 0 });
    expect(left(stalling)).toEqual({ ...at, temp: 0 });
  }, 30_000);
});
