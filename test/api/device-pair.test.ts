// The text and image built-ins on the webgpu device at once (Mesa's lavapipe here): both load there and serve side by
// side, requests to both interleaved, and starts that load both never crash. ONNX Runtime's webgpu EP has one device
// context per process, which two workers used to drive at once (src/devices/device-turns.ts). Each kiln runs as its own
// process, so a crash is a failed start rather than the end of the test run. KILN_TEST_DEVICE_PAIR_STARTS sets how
// many starts the last test makes (3 here; the check is 10).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { tempDir } from "../helpers/kiln.ts";
import { tinyImageModelDir, tinyModelDir } from "../helpers/tiny-model.ts";
import { type ServerProcess, startServerProcess } from "../load/server-process.ts";

const STARTS = Number(process.env.KILN_TEST_DEVICE_PAIR_STARTS ?? 3);
/** A first start on an empty Mesa shader cache builds every shader of both models on the CPU, one model at a time. */
const COLD_START_MS = 600_000;

let modelsDir = "";

async function start(): Promise<ServerProcess> {
  return startServerProcess({ dataDir: tempDir(), modelsDir, env: { KILN_DEVICE: "webgpu", KILN_BUILTIN_MODELS: "none" }, logLevel: "info" });
}

const chatBody = { model: "kiln-tiny-v1", max_tokens: 8, temperature: 0, ignore_eos: true, messages: [{ role: "user", content: "Tell me about lighthouses" }] };
const imageBody = { model: "kiln-tiny-image-v1", prompt: "a lighthouse at dusk", quality: "low", seed: 7 };

async function post(server: ServerProcess, path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

/** A chat and an image sent together: the greedy answer's text and the image's base64 PNG. */
async function bothAtOnce(server: ServerProcess): Promise<{ text: string; image: string }> {
  const [chat, image] = await Promise.all([post(server, "/v1/chat/completions", chatBody), post(server, "/v1/images/generations", imageBody)]);
  expect([chat.status, image.status]).toEqual([200, 200]);
  const text = (chat.json as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
  expect((chat.json as { usage: { completion_tokens: number } }).usage.completion_tokens).toBe(8);
  const png = (image.json as { data: { b64_json: string }[] }).data[0]!.b64_json;
  expect(Buffer.from(png, "base64").subarray(1, 4).toString()).toBe("PNG");
  return { text, image: png };
}

/** The log lines of a kiln that says something went wrong with a worker. */
const workerTrouble = (log: string) => log.split("\n").filter((l) => /"msg":"(model failed to load|worker lost|model did not load in time)"/.test(l));

describe("the text and image built-ins on the webgpu device at once", () => {
  let server: ServerProcess;
  beforeAll(async () => {
    modelsDir = mkdtempSync(join(tmpdir(), "kiln-device-pair-"));
    for (const dir of [await tinyModelDir(), await tinyImageModelDir()]) symlinkSync(dir, join(modelsDir, basename(dir)));
    server = await start();
  }, COLD_START_MS);
  afterAll(async () => {
    await server?.stop();
  });

  test("both load on the device", async () => {
    const models = (await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { data: { id: string; device: string }[] };
    expect(models.data.map((m) => [m.id, m.device]).sort()).toEqual([["kiln-tiny-image-v1", "webgpu"], ["kiln-tiny-v1", "webgpu"]]);
    const ready = server.log().split("\n").filter((l) => l.includes('"msg":"worker ready"'));
    expect(ready.map((l) => (JSON.parse(l) as { kind: string; device: string }).kind).sort()).toEqual(["image", "text"]);
    for (const l of ready) expect(JSON.parse(l)).toMatchObject({ device: "webgpu" });
    expect(workerTrouble(server.log())).toEqual([]);
  });

  test("20 rounds of a chat and an image sent together: every answer is the first round's, to the byte", async () => {
    const first = await bothAtOnce(server);
    for (let round = 1; round < 20; round++) expect(await bothAtOnce(server)).toEqual(first);
    expect(workerTrouble(server.log())).toEqual([]);
  }, 300_000);

  test(`${STARTS} starts: each loads both models and answers one request of each; none crashes`, async () => {
    const reference = await bothAtOnce(server);
    for (let i = 0; i < STARTS; i++) {
      const again = await start();
      try {
        expect(await bothAtOnce(again)).toEqual(reference);
        expect(workerTrouble(again.log())).toEqual([]);
      } finally {
        // A clean exit: a crash in a worker would take the process down with a signal.
        expect(await again.stop()).toBe(0);
      }
    }
  }, STARTS * 120_000);
});
