// Media intake reading files by id from a real file storage (disk, and an S3 bucket on a real S3-compatible server),
// counted by a wrapper: a file is refused from its stored size and first bytes without the rest being read, a file
// that is read is read whole once, and the bytes in flight stay within the server's intake budget (a request past it
// waits, then gets 503 with Retry-After).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Conversation, MediaPart, Part } from "../../../src/inference/conversation.ts";
import type { CoreRequest } from "../../../src/inference/request.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import { EMPTY_POLICY } from "../../../src/media/content-policy.ts";
import { HEAD_BYTES } from "../../../src/media/intake-read.ts";
import { createMediaIntake } from "../../../src/media/media-intake.ts";
import { MAX_TEXT_DOCUMENT_BYTES } from "../../../src/media/text-document.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";
import { countingStorage, type CountingStorage } from "../../helpers/counting-storage.ts";
import { type TestKiln, testKiln } from "../../helpers/kiln.ts";
import { startS3Server, type TestS3Server } from "../../helpers/s3-server.ts";
import { textSlice } from "../../helpers/upload-client.ts";

const KiB = 1024;
/** The model intake matches media against: text only, so a file can only be a document. */
const TEXT_MODEL = { id: "text-v1", capabilities: { vision: false, audio: false } } as unknown as ModelEntry;
const AT = "messages.0.content.1";

let s3: TestS3Server;
beforeAll(async () => {
  s3 = await startS3Server();
});
afterAll(() => s3.stop());

/** A chat turn that names `fileId` as its second part. */
function request(fileId: string): CoreRequest {
  const part: MediaPart = { type: "media", declared: "file", source: { kind: "file", fileId }, at: AT, filename: "notes.txt" };
  const conversation: Conversation = [{ role: "user", parts: [{ type: "text", text: "Summarise this." }, part] }];
  return { conversation, tools: null } as unknown as CoreRequest;
}

async function upload(k: TestKiln, bytes: Uint8Array): Promise<string> {
  const form = new FormData();
  form.append("purpose", "user_data");
  form.append("file", new Blob([bytes]), "notes.txt");
  const res = await k.req("/v1/files", { method: "POST", body: form });
  expect(res.status).toBe(200);
  return ((await res.json()) as { id: string }).id;
}

/** A kiln over `env` with its files behind a counting wrapper, and an intake over them with `budget` bytes in flight. */
async function setUp(env: Record<string, string>, budget = { bytes: 512 * 1024 * KiB, waitMs: 10_000 }) {
  const k = await testKiln({ env });
  const files = countingStorage(k.deps.files);
  const config = { ...k.deps.config, intakeBudgetBytes: budget.bytes, intakeWaitMs: budget.waitMs };
  const media = createMediaIntake({ config, db: k.deps.db, files, policy: EMPTY_POLICY });
  const who = { teamId: k.teamId, keyId: k.keyId };
  const prepare = (r: CoreRequest) => media.intake.prepare(r, TEXT_MODEL, who, new AbortController().signal);
  return { k, files, prepare, close: () => media.close() };
}

const STORES: [string, () => Record<string, string>][] = [
  ["disk", () => ({})],
  ["s3", () => s3.env],
];

for (const [name, env] of STORES) {
  describe(`file_id intake on ${name}`, () => {
    let k: TestKiln;
    let files: CountingStorage;
    let prepare: (r: CoreRequest) => Promise<void>;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ k, files, prepare, close } = await setUp(env()));
    });
    afterAll(() => close());

    test("a text document over the prompt's limit is refused from its size and first bytes: the rest is never read", async () => {
      const size = MAX_TEXT_DOCUMENT_BYTES + 1024 * KiB;
      const id = await upload(k, textSlice(0, size));
      const e = await apiRefusal(prepare(request(id)));
      expect([e.status, e.param, e.code, e.message]).toEqual([400, AT, null, `${AT} is a text document of ${size} bytes; at most ${MAX_TEXT_DOCUMENT_BYTES} fit a prompt.`]);
      expect(files.bytesRead(id)).toBeLessThanOrEqual(HEAD_BYTES);
    });

    test("a large file no decoder takes is refused from its first bytes", async () => {
      const junk = new Uint8Array(2 * MAX_TEXT_DOCUMENT_BYTES).map((_, i) => i % 251);
      const id = await upload(k, junk);
      const e = await apiRefusal(prepare(request(id)));
      expect([e.status, e.param]).toEqual([400, AT]);
      expect(e.message).toStartWith(`${AT}: unknown format`);
      expect(files.bytesRead(id)).toBeLessThanOrEqual(HEAD_BYTES);
    });

    test("a text document within the limit is read whole, once, into the prompt", async () => {
      const size = 200 * KiB;
      const id = await upload(k, textSlice(0, size));
      const r = request(id);
      await prepare(r);
      const part = r.conversation[0]!.parts[1] as Part & { text: string };
      expect(part.type).toBe("text");
      expect(part.text).toBe(`<file name="notes.txt">\n${textSlice(0, size).toString()}\n</file>`);
      expect(files.bytesRead(id)).toBe(HEAD_BYTES + size);
    });
  });
}

describe("the server's intake budget", () => {
  test("a read past the budget waits its turn, and one that waits too long is 503 with Retry-After, unread", async () => {
    const size = 600 * KiB;
    const { k, files, prepare, close } = await setUp({}, { bytes: 1024 * KiB, waitMs: 1500 });
    try {
      const [a, b, c] = [await upload(k, textSlice(0, size)), await upload(k, textSlice(1, size)), await upload(k, textSlice(2, size))];
      // A's read is held in flight: its 600 KiB are reserved until it is done.
      const gate = files.hold(a);
      const first = prepare(request(a));
      await gate.entered;
      const refused = await apiRefusal(prepare(request(b)));
      expect([refused.status, refused.type, refused.code, refused.param]).toEqual([503, "server_error", "service_overloaded", null]);
      expect(refused.headers["retry-after"]).toBe("60");
      expect(files.bytesRead(b)).toBeLessThanOrEqual(HEAD_BYTES);
      // C waits for A, and goes on once A is done.
      const third = request(c);
      const waiting = prepare(third);
      gate.open();
      await Promise.all([first, waiting]);
      expect(third.conversation[0]!.parts[1]!.type).toBe("text");
      expect(files.bytesRead(c)).toBe(HEAD_BYTES + size);
    } finally {
      await close();
    }
  });
});
