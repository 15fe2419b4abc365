// Worker for `kiln doctor`: proves a worker thread can load transformers.js and run an ONNX Runtime session.
import { env as transformersEnv } from "@huggingface/transformers";
import * as ort from "onnxruntime-node";
import { probeModel } from "./probe-model.ts";

export type DoctorWorkerReply =
  | { ok: true; y: number[]; onnxruntime: string; transformers: string }
  | { ok: false; error: string };

declare const self: Worker;

self.onmessage = async (e: MessageEvent<{ x: [number, number] }>) => {
  let reply: DoctorWorkerReply;
  try {
    const session = await ort.InferenceSession.create(probeModel(), { intraOpNumThreads: 1 });
    const out = await session.run({ X: new ort.Tensor("float32", Float32Array.from(e.data.x), [1, 2]) });
    await session.release();
    reply = { ok: true, y: [...(out.Y!.data as Float32Array)], onnxruntime: ort.env.versions.node ?? "?", transformers: transformersEnv.version };
  } catch (err) {
    reply = { ok: false, error: err instanceof Error ? err.message : String(err) };
  }
  postMessage(reply);
};
