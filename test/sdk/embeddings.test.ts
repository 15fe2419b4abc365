// POST /v1/embeddings through the official openai client against a real kiln serving kiln-embed-tiny-v1 beside the
// tiny text model: float and base64 answers with the values checked (unit length after normalization; base64 decodes
// to the float answer; the same input gives the same vector alone, in a batch of 16 and from 16 clients at once, within
// the stated bound; `dimensions` cuts and renormalizes), usage and its row, and the capability refusals.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import OpenAI from "openai";
import { usage } from "../../src/db/schema.ts";
import { sqliteOf } from "../helpers/databases.ts";
import { embedTestServer } from "../helpers/embed-server.ts";
import type { TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

/**
 * How far one vector component may move with what shares its run (README, Embeddings): right padding and masked
 * attention keep a row's own numbers, but ONNX Runtime's kernels may sum in another order for another batch shape.
 */
const BATCH_BOUND = 1e-6;
const MODEL = "kiln-embed-tiny-v1";
const TEXT = "The river carried sand to the sea.";
/** Texts of different lengths, so the batch pads TEXT's row. */
const OTHERS = Array.from({ length: 15 }, (_, i) => `${"a longer sentence about rivers and sand ".repeat(i % 5)}number ${i}`);

let server: TestServer;
let client: OpenAI;
beforeAll(async () => ({ server, client } = await embedTestServer()));
afterAll(() => server.stop(1000));

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const maxDiff = (a: number[], b: number[]) => Math.max(...a.map((x, i) => Math.abs(x - b[i]!)));
const decode = (b64: string) => Array.from(new Float32Array(new Uint8Array(Buffer.from(b64, "base64")).buffer));
const floats = async (input: string | string[], extra: { dimensions?: number } = {}) =>
  (await client.embeddings.create({ model: MODEL, input, encoding_format: "float", ...extra })).data.map((d) => d.embedding);

describe("embeddings.create", () => {
  test("float: a list of one unit vector of the model's size, with usage in tokens", async () => {
    const res = await client.embeddings.create({ model: MODEL, input: TEXT, encoding_format: "float" });
    expect([res.object, res.model, res.data.length, res.data[0]!.object, res.data[0]!.index]).toEqual(["list", MODEL, 1, "embedding", 0]);
    const v = res.data[0]!.embedding;
    expect(v).toHaveLength(64);
    expect(Math.abs(norm(v) - 1)).toBeLessThan(1e-5);
    expect(res.usage.prompt_tokens).toBeGreaterThan(3);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens);
  });

  test("base64 decodes to exactly the float answer; the client's default (base64 decoded for you) is the same", async () => {
    const [float] = await floats(TEXT);
    const b64 = await client.embeddings.create({ model: MODEL, input: TEXT, encoding_format: "base64" });
    const text = b64.data[0]!.embedding as unknown as string;
    expect(typeof text).toBe("string");
    expect(decode(text)).toEqual(float!);
    const byDefault = await client.embeddings.create({ model: MODEL, input: TEXT });
    expect(byDefault.data[0]!.embedding).toEqual(float!);
  });

  test("the same input gives the same vector alone, in a padded batch of 16, and from 16 clients at once", async () => {
    const [alone] = await floats(TEXT);
    const batch = await floats([...OTHERS.slice(0, 7), TEXT, ...OTHERS.slice(7)]);
    expect(batch).toHaveLength(16);
    const concurrent = await Promise.all([TEXT, ...OTHERS].map((t) => floats(t)));
    const diffs = [maxDiff(alone!, batch[7]!), maxDiff(alone!, concurrent[0]![0]!)];
    expect(Math.max(...diffs)).toBeLessThanOrEqual(BATCH_BOUND);
    // Each other input too: its vector in the batch is its vector alone.
    for (let i = 0; i < OTHERS.length; i++) expect(maxDiff(concurrent[i + 1]![0]!, batch[i < 7 ? i : i + 1]!)).toBeLessThanOrEqual(BATCH_BOUND);
    // Different inputs are different vectors.
    expect(maxDiff(batch[0]!, batch[1]!)).toBeGreaterThan(0.01);
  });

  test("dimensions cuts each vector to the trained size and scales it back to unit length", async () => {
    const [full] = await floats(TEXT);
    const [cut] = await floats(TEXT, { dimensions: 16 });
    expect(cut).toHaveLength(16);
    expect(Math.abs(norm(cut!) - 1)).toBeLessThan(1e-5);
    const prefix = full!.slice(0, 16);
    expect(maxDiff(cut!, prefix.map((x) => x / norm(prefix)))).toBeLessThan(1e-6);
  });

  test("token-id inputs: usage counts them as sent; the answer keeps the inputs' order", async () => {
    const res = await client.embeddings.create({ model: MODEL, input: [[5, 6, 7], [8], [5, 6, 7]], encoding_format: "float" });
    expect(res.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(res.usage.prompt_tokens).toBe(7);
    expect(res.data[2]!.embedding).toEqual(res.data[0]!.embedding);
    expect(maxDiff(res.data[0]!.embedding, res.data[1]!.embedding)).toBeGreaterThan(0.01);
  });

  test("the usage row names the endpoint and counts the input tokens only", async () => {
    const { data, response } = await client.embeddings.create({ model: MODEL, input: [TEXT, "Hello"], encoding_format: "float" }).withResponse();
    const requestId = response.headers.get("x-request-id")!;
    const row = (await waitFor(() => sqliteOf(server.deps.db).select().from(usage).where(eq(usage.requestId, requestId)).get(), { what: "the usage row" }))!;
    expect([row.endpoint, row.model, row.status, row.inputTokens, row.outputTokens]).toEqual(["embeddings", MODEL, "completed", data.usage.prompt_tokens, 0]);
  });

  test("a chat model asked for embeddings, and the embedding model asked for chat, are 400s naming the capability", async () => {
    // The client's promises are lazy: each is awaited through `catch`, which sends it.
    const refused = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
    const chat = await refused(client.embeddings.create({ model: "kiln-tiny-v1", input: TEXT }));
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((chat as Error).message).toMatch(/no embeddings capability/);
    const asChat = await refused(client.chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "hi" }] }));
    expect([asChat instanceof OpenAI.BadRequestError, (asChat as Error).message]).toEqual([true, expect.stringMatching(/no chat capability/)]);
    const dims = await refused(client.embeddings.create({ model: MODEL, input: TEXT, dimensions: 8 }));
    expect((dims as Error).message).toMatch(/dimensions must be from 16 to 64/);
  });
});
