// Opens an embedding folder's encoder graph in ONNX Runtime and runs padded batches through it: input_ids and
// attention_mask in (token_type_ids too, all zeros, when the graph takes them), last_hidden_state [B, S, H] out.
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import type { EmbedLoadSpec } from "../../src/protocol/embed.ts";
import { cpuSessionOptions } from "../text/load-common.ts";
import { padBatch } from "./batch-inputs.ts";

export interface EncoderOutput {
  hidden: Float32Array;
  seq: number;
  lengths: number[];
}

export interface EncoderRunner {
  run(rows: readonly (readonly number[])[]): Promise<EncoderOutput>;
  dispose(): Promise<void>;
}

/** The graph's token-row output: last_hidden_state as exports name it, else its only output. */
function hiddenOutput(session: ort.InferenceSession): string {
  if (session.outputNames.includes("last_hidden_state")) return "last_hidden_state";
  if (session.outputNames.length === 1) return session.outputNames[0]!;
  throw new Error(`the graph has no last_hidden_state output (it has ${session.outputNames.join(", ")})`);
}

/** Loads the graph and proves it with a one-token run: its rows must be `spec.dimensions` wide. */
export async function loadEncoder(spec: EmbedLoadSpec): Promise<EncoderRunner> {
  const session = await ort.InferenceSession.create(join(spec.dir, "onnx", spec.graph), cpuSessionOptions(spec.threads));
  for (const name of ["input_ids", "attention_mask"]) {
    if (!session.inputNames.includes(name)) throw new Error(`the graph has no ${name} input (it has ${session.inputNames.join(", ")})`);
  }
  const output = hiddenOutput(session);
  const typeIds = session.inputNames.includes("token_type_ids");
  const runner: EncoderRunner = {
    async run(rows) {
      const batch = padBatch(rows);
      const dims = [batch.rows, batch.seq];
      const feeds: Record<string, ort.Tensor> = {
        input_ids: new ort.Tensor("int64", batch.inputIds, dims),
        attention_mask: new ort.Tensor("int64", batch.attentionMask, dims),
      };
      if (typeIds) feeds.token_type_ids = new ort.Tensor("int64", new BigInt64Array(batch.inputIds.length), dims);
      const out = (await session.run(feeds))[output]!;
      if (!(out.data instanceof Float32Array)) throw new Error(`the graph's ${output} is ${out.type}, not float32`);
      return { hidden: out.data as Float32Array, seq: batch.seq, lengths: batch.lengths };
    },
    dispose: () => session.release(),
  };
  const probe = await runner.run([[0]]);
  if (probe.hidden.length !== spec.dimensions) {
    await runner.dispose();
    throw new Error(`the graph's rows are ${probe.hidden.length} wide, but the pooling config says ${spec.dimensions}`);
  }
  return runner;
}
