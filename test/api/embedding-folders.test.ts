// Operator folders in the sentence-transformers layout served end to end: a hand-made encoder graph without
// token_type_ids whose token rows are known ([id, 1, 0, 0]), under cls, lasttoken and mean pooling without Normalize,
// so each answer is checked exactly, padding included (a short row batched with a long one keeps its own last token).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { GraphBuilder, T } from "../../src/modelgen/onnx-builder.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyEmbedModelDir } from "../helpers/tiny-model.ts";

const VOCAB = 2048;
const WIDTH = 4;
const ST = "sentence_transformers.models.";

/** `last_hidden_state` = row `id` of a table whose row i is [i, 1, 0, 0]: no attention, so every row is known. */
function tableGraph(): Uint8Array {
  const g = new GraphBuilder();
  const ids = g.input("input_ids", T.INT64, ["batch_size", "sequence_length"]);
  g.input("attention_mask", T.INT64, ["batch_size", "sequence_length"]);
  const table = Float32Array.from({ length: VOCAB * WIDTH }, (_, k) => (k % WIDTH === 0 ? k / WIDTH : k % WIDTH === 1 ? 1 : 0));
  g.inline("table", T.FLOAT, [VOCAB, WIDTH], new Uint8Array(table.buffer));
  g.node("Gather", ["table", ids], {}, { output: "last_hidden_state" });
  g.output("last_hidden_state", T.FLOAT, ["batch_size", "sequence_length", WIDTH]);
  return g.encode("table");
}

async function operatorFolder(models: string, name: string, mode: string): Promise<void> {
  const dir = join(models, name);
  mkdirSync(join(dir, "onnx"), { recursive: true });
  mkdirSync(join(dir, "1_Pooling"));
  const tiny = await tinyEmbedModelDir();
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(join(tiny, f), join(dir, f));
  writeFileSync(join(dir, "config.json"), JSON.stringify({ model_type: "bert", hidden_size: WIDTH, max_position_embeddings: 64 }));
  writeFileSync(join(dir, "onnx", "model.onnx"), tableGraph());
  writeFileSync(join(dir, "modules.json"), JSON.stringify([{ idx: 0, name: "0", path: "", type: `${ST}Transformer` }, { idx: 1, name: "1", path: "1_Pooling", type: `${ST}Pooling` }]));
  writeFileSync(join(dir, "1_Pooling", "config.json"), JSON.stringify({ word_embedding_dimension: WIDTH, [`pooling_mode_${mode}`]: true }));
}

let server: TestServer;
let client: OpenAI;
beforeAll(async () => {
  const models = tempDir("kiln-embed-folders-");
  await operatorFolder(models, "cls-embed-v1", "cls_token");
  await operatorFolder(models, "last-embed-v1", "lasttoken");
  await operatorFolder(models, "mean-embed-v1", "mean_tokens");
  server = await startTestServer({}, { modelDir: join(models, "cls-embed-v1") });
  client = new OpenAI({ apiKey: server.key, baseURL: `${server.url}/v1`, maxRetries: 0 });
});
afterAll(() => server.stop(1000));

const vectors = async (model: string) =>
  (await client.embeddings.create({ model, input: [[3, 7, 9], [5]], encoding_format: "float" })).data.map((d) => d.embedding);

describe("operator embedding folders", () => {
  test("each pooling mode gives exactly its rows: cls the first, lasttoken the last real one, mean their average", async () => {
    expect(await vectors("cls-embed-v1")).toEqual([[3, 1, 0, 0], [5, 1, 0, 0]]);
    expect(await vectors("last-embed-v1")).toEqual([[9, 1, 0, 0], [5, 1, 0, 0]]);
    const [mean, single] = await vectors("mean-embed-v1");
    expect([Math.fround(19 / 3), 1, 0, 0]).toEqual(mean!);
    expect(single).toEqual([5, 1, 0, 0]);
  });

  test("the folders are listed as embedding models, named after their folders, unnormalized", async () => {
    const list = (await (await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as {
      data: { id: string; owned_by: string; capabilities: { embeddings: boolean; chat: boolean }; embedding: { pooling: string; normalized: boolean; dimensions: number } }[];
    };
    expect(list.data.map((m) => [m.id, m.owned_by, m.capabilities.embeddings, m.capabilities.chat, m.embedding.pooling, m.embedding.normalized, m.embedding.dimensions])).toEqual([
      ["cls-embed-v1", "operator", true, false, "cls", false, 4],
      ["last-embed-v1", "operator", true, false, "lasttoken", false, 4],
      ["mean-embed-v1", "operator", true, false, "mean", false, 4],
    ]);
  });
});
