// receiveUpload: the file part streams to storage with back-pressure, the fields may come before or after it, and
// every refusal (size, purpose, shape, a cut body) leaves nothing stored.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { ApiError } from "../../../src/errors/api-error.ts";
import { DiskFileStorage } from "../../../src/files/disk-storage.ts";
import { newFileId } from "../../../src/files/file-id.ts";
import { FORM_OVERHEAD_BYTES, MAX_FIELD_BYTES, MAX_PARTS, receiveUpload, refuseDeclaredOversize } from "../../../src/files/upload.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { apiRefusal, apiRefusalOf } from "../../helpers/api-refusal.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const B = "b0undary";
const TYPE = `multipart/form-data; boundary=${B}`;
const field = (name: string, value: string) => `--${B}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
const fileHead = (name = "file") => `--${B}\r\nContent-Disposition: form-data; name="${name}"; filename="f.bin"\r\n\r\n`;
const END = `--${B}--\r\n`;

/** A body from pieces (strings, or byte counts of generated data), sent in 64 KiB chunks; counts pulls and cancels. */
function body(pieces: (string | number)[], opts: { failAfter?: number } = {}) {
  const all = Buffer.concat(pieces.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.alloc(p, 0x61))));
  const state = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      const at = state.pulled * 65536;
      if (opts.failAfter !== undefined && at >= opts.failAfter) return c.error(new Error("connection reset"));
      if (at >= all.length) return c.close();
      state.pulled++;
      c.enqueue(all.subarray(at, at + 65536));
    },
    cancel: () => void (state.cancelled = true),
  }, { highWaterMark: 0 });
  return { stream, state };
}

const checkPurpose = (fields: Map<string, string>, complete: boolean) => {
  if (fields.get("purpose") === "bad") throw ApiError.badRequest("Invalid value for 'purpose'.", "purpose");
  if (complete && !fields.get("purpose")) throw ApiError.badRequest("Missing required parameter: 'purpose'.", "purpose");
};

function setup() {
  const storage = new DiskFileStorage(tempDir());
  const id = newFileId();
  const stored = () => readdirSync(storage.dir).filter((n) => n !== "tmp").length + readdirSync(storage.tmpDir).length;
  const receive = (b: ReadableStream<Uint8Array>, maxFileBytes = 1024 * 1024, check = checkPurpose) =>
    receiveUpload(b, TYPE, { maxFileBytes, timeoutMs: 10_000, fileField: "file" }, (s) => storage.put(id, s), check);
  return { storage, id, stored, receive };
}


describe("receiveUpload", () => {
  test("purpose before or after the file: the file is stored whole, the fields are read", async () => {
    for (const pieces of [[field("purpose", "vision"), fileHead(), 300_000, `\r\n`, END], [fileHead(), 300_000, `\r\n`, field("purpose", "vision"), END]]) {
      const { storage, id, receive } = setup();
      const got = await receive(body(pieces).stream);
      expect([got.bytes, got.fields.get("purpose"), got.file.filename]).toEqual([300_000, "vision", "f.bin"]);
      expect((await storage.get(id))!.size).toBe(300_000);
    }
  });

  test("a form that succeeds releases its body at the closing boundary: the rest is cancelled and the upload deadline cleared", async () => {
    // The body stays open after the closing boundary (an epilogue, or just an end not yet read): nothing reads it.
    const b = body([field("purpose", "x"), fileHead(), 100_000, "\r\n", END, "epilogue"]);
    const { receive } = setup();
    expect((await receive(b.stream)).bytes).toBe(100_000);
    // LimitedReader.cancel is what clears the deadline's timer; without it the timer held the body for the whole upload timeout.
    await waitFor(() => b.state.cancelled, { what: "the body cancelled after a successful upload", timeoutMs: 2000 });
  });

  test("a file of exactly the limit is taken; one byte more is a 400 naming the limit, read no further, nothing stored", async () => {
    const ok = setup();
    expect((await ok.receive(body([field("purpose", "x"), fileHead(), 1024 * 1024, "\r\n", END]).stream)).bytes).toBe(1024 * 1024);
    const over = setup();
    const b = body([field("purpose", "x"), fileHead(), 1024 * 1024 + 1, "\r\n", END]);
    const e = await apiRefusal(over.receive(b.stream));
    expect([e.status, e.message, e.param]).toEqual([400, "The file is larger than the size limit of 1 MiB.", "file"]);
    expect(b.state.cancelled).toBe(true);
    expect(over.stored()).toBe(0);
    // A 64 MiB body would be 1024 chunks: it stops at the first past the limit.
    const huge = body([field("purpose", "x"), fileHead(), 64 * 1024 * 1024, "\r\n", END]);
    await apiRefusal(setup().receive(huge.stream));
    expect(huge.state.pulled).toBeLessThanOrEqual(18);
  });

  test("a purpose refused after the file was streamed leaves nothing stored", async () => {
    const s = setup();
    const e = await apiRefusal(s.receive(body([fileHead(), 500_000, "\r\n", END]).stream));
    expect([e.message, e.param]).toEqual(["Missing required parameter: 'purpose'.", "purpose"]);
    expect(s.stored()).toBe(0);
  });

  test("a bad field sent before the file is refused before the file is read", async () => {
    const s = setup();
    const b = body([field("purpose", "bad"), fileHead(), 4 * 1024 * 1024, "\r\n", END]);
    const e = await apiRefusal(s.receive(b.stream, 8 * 1024 * 1024));
    expect([e.message, e.param]).toEqual(["Invalid value for 'purpose'.", "purpose"]);
    expect([b.state.pulled, b.state.cancelled]).toEqual([1, true]);
    expect(s.stored()).toBe(0);
  });

  test("a body cut mid-file is a 400 and leaves nothing stored", async () => {
    const s = setup();
    const e = await apiRefusal(s.receive(body([field("purpose", "x"), fileHead(), 800_000, "\r\n", END], { failAfter: 400_000 }).stream));
    expect(e.message).toBe("The upload was cut off before the end of its body.");
    expect(s.stored()).toBe(0);
  });

  test("the body is read only as fast as the storage takes it", async () => {
    const b = body([field("purpose", "x"), fileHead(), 4 * 1024 * 1024, "\r\n", END]);
    let consumed = 0;
    const maxAhead = { n: 0 };
    const slowStore = async (s: ReadableStream<Uint8Array>) => {
      for await (const chunk of s) {
        consumed += chunk.byteLength;
        maxAhead.n = Math.max(maxAhead.n, b.state.pulled * 65536 - consumed);
        await Bun.sleep(1);
      }
      return consumed;
    };
    await receiveUpload(b.stream, TYPE, { maxFileBytes: 8 * 1024 * 1024, timeoutMs: 10_000, fileField: "file" }, slowStore, checkPurpose);
    expect(consumed).toBe(4 * 1024 * 1024);
    expect(maxAhead.n).toBeLessThanOrEqual(2 * 65536);
  });

  test("forms of the wrong shape are 400s naming the field", async () => {
    const cases: [pieces: (string | number)[], message: string, param: string | null][] = [
      [[field("purpose", "x"), END], "The form has no file field.", "file"],
      [[field("purpose", "x"), fileHead(), 10, "\r\n", fileHead(), 10, "\r\n", END], "The form has more than one file field.", "file"],
      [[field("purpose", "x"), field("purpose", "y"), fileHead(), 10, "\r\n", END], "The form field 'purpose' is given more than once.", "purpose"],
      [[field("note", "n".repeat(MAX_FIELD_BYTES + 1)), END], "The form field 'note' is longer than 64 KiB.", "note"],
      [[...Array.from({ length: MAX_PARTS + 1 }, (_, i) => field(`f${i}`, "v")), END], `The form has more than ${MAX_PARTS} parts.`, null],
    ];
    for (const [pieces, message, param] of cases) {
      const s = setup();
      const e = await apiRefusal(s.receive(body(pieces).stream));
      expect([e.status, e.message, e.param]).toEqual([400, message, param]);
      expect(s.stored()).toBe(0);
    }
  });
});

describe("refuseDeclaredOversize", () => {
  const MiB = 1024 * 1024;
  const headers = (length?: string) => new Headers(length === undefined ? {} : { "content-length": length });

  test("a declared length up to the limit plus the form's overhead passes; one byte more is the 400 naming the limit", () => {
    for (const length of [undefined, "0", String(MiB), String(MiB + FORM_OVERHEAD_BYTES), "not a number"]) refuseDeclaredOversize(headers(length), MiB);
    const e = apiRefusalOf(() => refuseDeclaredOversize(headers(String(MiB + FORM_OVERHEAD_BYTES + 1)), MiB));
    expect([e.status, e.message, e.param]).toEqual([400, "The file is larger than the size limit of 1 MiB.", "file"]);
  });
});
