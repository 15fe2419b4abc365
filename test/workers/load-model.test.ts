// Loads the tiny model in-process and checks what the worker derives from it: graph layout, token bytes, chunked prefill.
import { beforeAll, describe, expect, test } from "bun:test";
import { AutoTokenizer } from "@huggingface/transformers";
import { Engine } from "../../workers/text/engine.ts";
import { servedContext } from "../../workers/text/load-common.ts";
import { type LoadedModel, loadModel, sessionOptions } from "../../workers/text/load-model.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { params } from "./worker-client.ts";

let dir = "";
let model: LoadedModel;

beforeAll(async () => {
  dir = await tinyModelDir();
  model = await loadModel({ id: "kiln-tiny-v1", dir, dtype: "fp32", threads: 1, maxBatch: 4 });
});

describe("loadModel on the tiny model", () => {
  test("reads the graph layout and limits", () => {
    const { layout, vocabSize, maxContext, padId } = model.runner;
    expect(layout.pastNames.length).toBe(8);
    expect(layout.pastNames.slice(0, 2)).toEqual(["past_key_values.0.key", "past_key_values.0.value"]);
    expect([layout.kvHeads, layout.headDim, layout.kvType]).toEqual([2, 32, "float32"]);
    expect([vocabSize, maxContext, padId]).toEqual([2048, 131072, 2037]);
  });

  test("the worker holds sequences to the context the server admits against (kiln.json's), else config.json's", async () => {
    expect(servedContext({ contextLength: 8192 }, { max_position_embeddings: 131072 })).toBe(8192);
    expect(servedContext({}, { max_position_embeddings: 4096 })).toBe(4096);
    expect(servedContext({}, {})).toBe(2048);
    const m = await loadModel({ id: "kiln-tiny-v1", dir, dtype: "fp32", threads: 1, maxBatch: 4, contextLength: 8192 });
    expect(m.runner.maxContext).toBe(8192);
    await m.dispose();
  });

  test("special tokens are their literal text", () => {
    const text = (id: number) => new TextDecoder().decode(model.tokenBytes(id));
    expect(text(2040)).toBe("<think>");
    expect(text(2041)).toBe("</think>");
    expect(text(2042)).toBe("<tool_call>");
    expect(text(2039)).toBe("<|im_end|>");
  });

  test("concatenated token bytes decode exactly like the tokenizer", async () => {
    const tokenizer = await AutoTokenizer.from_pretrained(dir);
    const sentence = tokenizer.encode("Héllo wörld — <think>why?</think> 😀 end.\n\tTabs", { add_special_tokens: false });
    const spread = Array.from({ length: 2048 }, (_, i) => i).filter((i) => i % 7 === 3);
    for (const ids of [sentence, spread]) {
      const bytes = ids.flatMap((id) => Array.from(model.tokenBytes(id)));
      expect(new TextDecoder().decode(Uint8Array.from(bytes))).toBe(tokenizer.decode(ids, { skip_special_tokens: false }));
    }
  });
});

describe("the engine on the real graph", () => {
  /** Greedy text of `prompt` next to a short neighbour, with the given per-step prefill budget. */
  async function generate(prompt: number[], budget: number): Promise<string> {
    let text = "";
    const engine = new Engine(model.runner, {
      maxBatch: 4,
      tokenBytes: model.tokenBytes,
      prefillTokenBudget: budget,
      emit: (deltas) => {
        for (const d of deltas) if (d.seqId === "long") text += d.text;
      },
    });
    engine.add("long", prompt, params(25));
    engine.add("neighbour", [5, 6, 7], params(25));
    while (engine.hasWork()) await engine.step();
    return text;
  }

  test("a prompt prefilled in chunks continues exactly as one prefilled at once", async () => {
    const prompt = Array.from({ length: 45 }, (_, i) => (i * 37 + 11) % 2000);
    const whole = await generate(prompt, 512);
    expect(whole.length).toBeGreaterThan(0);
    expect(await generate(prompt, 8)).toBe(whole);
    expect(await generate(prompt, 11)).toBe(whole);
  });
});

describe("sessionOptions", () => {
  const spinning = (o: Record<string, unknown>) => (o.extra as { session: { intra_op: { allow_spinning: string } } }).session.intra_op.allow_spinning;
  test("ONNX Runtime's threads spin only when they leave a core to the rest of the process", () => {
    expect(spinning(sessionOptions(2, 2))).toBe("0");
    expect(spinning(sessionOptions(4, 2))).toBe("0");
    expect(spinning(sessionOptions(2, 4))).toBe("1");
    expect(sessionOptions(3, 4)).toMatchObject({ intraOpNumThreads: 3, interOpNumThreads: 1 });
  });
  test("KILN_ORT_SPINNING decides instead when set", () => {
    expect(spinning(sessionOptions(2, 2, "1"))).toBe("1");
    expect(spinning(sessionOptions(2, 4, "0"))).toBe("0");
  });
  test("KILN_ORT_SPINNING=small: the small-step session spins inside each run and stops at its end; the batch session keeps the rule", () => {
    const stops = (o: Record<string, unknown>) => (o.extra as { session: { force_spinning_stop?: string } }).session.force_spinning_stop;
    expect([spinning(sessionOptions(2, 2, "small", "small")), stops(sessionOptions(2, 2, "small", "small"))]).toEqual(["1", "1"]);
    expect([spinning(sessionOptions(2, 2, "small", "batch")), stops(sessionOptions(2, 2, "small", "batch"))]).toEqual(["0", undefined]);
    // With a core left over, both spin freely, as without the setting.
    expect([spinning(sessionOptions(2, 4, "small", "small")), stops(sessionOptions(2, 4, "small", "small"))]).toEqual(["1", undefined]);
    expect([spinning(sessionOptions(2, 2, undefined, "small")), stops(sessionOptions(2, 2, undefined, "small"))]).toEqual(["0", undefined]);
  });
});
