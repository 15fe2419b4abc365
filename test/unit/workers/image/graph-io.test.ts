// Reading each diffusion graph's variant from session metadata (names, element types, fixed dims).
import { describe, expect, test } from "bun:test";
import { type GraphSession, textEncoderIO, unetIO, vaeDecoderIO, vaeEncoderIO } from "../../../../workers/image/graph-io.ts";

type Io = [name: string, type: string, shape: (number | string)[]];

function session(inputs: Io[], outputs: Io[]): GraphSession {
  const meta = (list: Io[]) => list.map(([name, type, shape]) => ({ name, isTensor: true, type, shape }));
  return {
    inputNames: inputs.map((i) => i[0]),
    outputNames: outputs.map((o) => o[0]),
    inputMetadata: meta(inputs),
    outputMetadata: meta(outputs),
    run: () => Promise.reject(new Error("not run")),
  };
}

const unet = (over: Partial<Record<"sample" | "timestep" | "hidden", Io>> = {}, extra: Io[] = []) =>
  session(
    [over.sample ?? ["sample", "float32", ["batch", 4, "h", "w"]], over.timestep ?? ["timestep", "int64", ["steps"]], over.hidden ?? ["encoder_hidden_states", "float32", ["batch", "seq", 1024]], ...extra],
    [["out_sample", "float32", ["batch", 4, "h", "w"]]],
  );

describe("unetIO", () => {
  test("a dynamic export: per-row int64 timesteps, nothing fixed but the channels and hidden size", () => {
    expect(unetIO(unet())).toEqual({
      sampleType: "float32",
      hiddenType: "float32",
      timestepType: "int64",
      timestep: "per-row",
      timestepScalar: false,
      batch: null,
      channels: 4,
      height: null,
      width: null,
      seqLen: null,
      hidden: 1024,
    });
  });

  test("float16 graph with a length-1 float timestep, fixed batch and size", () => {
    const io = unetIO(unet({ sample: ["sample", "float16", [2, 4, 64, 64]], timestep: ["timestep", "float16", [1]], hidden: ["encoder_hidden_states", "float16", [2, 77, 1024]] }));
    expect(io).toMatchObject({ sampleType: "float16", hiddenType: "float16", timestepType: "float16", timestep: "shared", batch: 2, height: 64, width: 64, seqLen: 77 });
  });

  test("a 0-D timestep is shared and fed as a scalar; a fixed length equal to the batch is per row", () => {
    expect(unetIO(unet({ timestep: ["timestep", "float32", []] }))).toMatchObject({ timestep: "shared", timestepScalar: true });
    expect(unetIO(unet({ sample: ["sample", "float32", [2, 4, "h", "w"]], timestep: ["timestep", "float32", [2]] }))).toMatchObject({ timestep: "per-row", batch: 2 });
  });

  test("refusals name what is wrong", () => {
    expect(() => unetIO(unet({}, [["text_embeds", "float32", ["batch", 1280]]]))).toThrow("unet takes inputs kiln does not feed: text_embeds");
    expect(() => unetIO(unet({ timestep: ["timestep", "double", [1]] }))).toThrow("unet's timestep is double");
    expect(() => unetIO(unet({ timestep: ["timestep", "int64", [3]] }))).toThrow("fixed length 3");
    expect(() => unetIO(unet({ sample: ["sample", "int8", ["b", 4, "h", "w"]] }))).toThrow("unet's sample is int8");
    expect(() => unetIO(session([["sample", "float32", ["b", 4, "h", "w"]]], [["out_sample", "float32", []]]))).toThrow('unet has no input "timestep", "encoder_hidden_states"');
  });
});

describe("textEncoderIO", () => {
  test("ids type and fixed length from input_ids; hidden size from last_hidden_state", () => {
    const s = session([["input_ids", "int32", ["batch", 77]]], [["last_hidden_state", "float32", ["batch", 77, 768]], ["pooler_output", "float32", ["batch", 768]]]);
    expect(textEncoderIO(s)).toEqual({ idsType: "int32", batch: null, seqLen: 77, hidden: 768 });
  });

  test("refuses graphs that need more than ids, or have no last_hidden_state", () => {
    expect(() => textEncoderIO(session([["input_ids", "int64", ["b", 77]], ["attention_mask", "int64", ["b", 77]]], [["last_hidden_state", "float32", []]]))).toThrow("attention_mask");
    expect(() => textEncoderIO(session([["input_ids", "int64", ["b", 77]]], [["pooler_output", "float32", []]]))).toThrow('no output "last_hidden_state"');
  });
});

describe("VAE graphs", () => {
  test("decoder: input type and fixed dims", () => {
    const s = session([["latent_sample", "float16", [1, 4, 64, 64]]], [["sample", "float16", [1, 3, 512, 512]]]);
    expect(vaeDecoderIO(s)).toEqual({ inType: "float16", batch: 1, height: 64, width: 64, output: "sample" });
  });

  test("encoder: latent_sample or latent_parameters", () => {
    const a = session([["sample", "float32", ["b", 3, "H", "W"]]], [["latent_sample", "float32", ["b", 4, "h", "w"]]]);
    const b = session([["sample", "float32", ["b", 3, "H", "W"]]], [["latent_parameters", "float32", ["b", 8, "h", "w"]]]);
    expect(vaeEncoderIO(a).output).toBe("latent_sample");
    expect(vaeEncoderIO(b).output).toBe("latent_parameters");
    expect(() => vaeEncoderIO(session([["sample", "float32", []]], [["z", "float32", []]]))).toThrow("neither latent_sample nor latent_parameters");
  });
});
