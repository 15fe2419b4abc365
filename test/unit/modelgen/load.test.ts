// transformers.js loads the tiny model folder fully offline and generates.
import { beforeAll, describe, expect, test } from "bun:test";
import { dirname, basename } from "node:path";
import { AutoModelForCausalLM, AutoTokenizer, env, type PreTrainedModel, type PreTrainedTokenizer } from "@huggingface/transformers";
import { DEFAULT_MODEL_ID } from "../../../src/modelgen/index.ts";
import { tinyModelDir } from "../../helpers/tiny-model.ts";

let tok: PreTrainedTokenizer;
let model: PreTrainedModel;
let dir: string;
beforeAll(async () => {
  dir = await tinyModelDir();
  env.allowRemoteModels = false;
  env.localModelPath = dirname(dir);
  tok = await AutoTokenizer.from_pretrained(basename(dir), { local_files_only: true });
  model = await AutoModelForCausalLM.from_pretrained(basename(dir), { local_files_only: true, dtype: "fp32" });
});

describe("tiny model through transformers.js", () => {
  test("tinyModelDir returns the cached default model folder", async () => {
    expect(basename(dir)).toBe(DEFAULT_MODEL_ID);
    expect(await tinyModelDir()).toBe(dir);
    const manifest = await Bun.file(`${dir}/kiln.json`).json();
    expect(manifest.id).toBe(DEFAULT_MODEL_ID);
  });

  test("generate produces new tokens for a chat prompt", async () => {
    const prompt = tok.apply_chat_template([{ role: "user", content: "Tell me about the kiln." }], { tokenize: false, add_generation_prompt: true }) as string;
    const inputs = tok(prompt);
    const out = await model.generate({ ...inputs, max_new_tokens: 10, do_sample: false, min_new_tokens: 10 });
    const rows = (out as { tolist(): bigint[][] }).tolist();
    const promptLen = (inputs.input_ids.dims as number[])[1]!;
    expect(rows[0]!.length).toBe(promptLen + 10);
    const fresh = rows[0]!.slice(promptLen).map(Number);
    expect(fresh.every((t) => t >= 0 && t < 2048)).toBe(true);
    expect(typeof tok.decode(fresh)).toBe("string");
  });

  test("a left-padded transformers.js batch gives each row its solo greedy tokens", async () => {
    const prompts = ["Hi", "The kiln stood at the edge of the village."];
    const gen = async (p: string[]) => {
      const inputs = tok(p, { padding: true });
      const out = (await model.generate({ ...inputs, max_new_tokens: 6, min_new_tokens: 6, do_sample: false })) as { tolist(): bigint[][] };
      return out.tolist().map((r) => r.slice(-6).map(Number));
    };
    const batch = await gen(prompts);
    expect(batch[0]).toEqual((await gen([prompts[0]!]))[0]!);
    expect(batch[1]).toEqual((await gen([prompts[1]!]))[0]!);
  });
});
