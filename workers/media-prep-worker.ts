// Bun worker entry: preprocesses an inference worker's images and audio (the folder's image processor, Whisper
// log-mel) on a thread of its own, so a 30 s clip's features never stall the batch that worker is decoding.
import type { FromPrep, ToPrep } from "../src/protocol/media-prep.ts";
import { MediaPreprocessor } from "./text/media-preprocess.ts";
import { MediaInputError } from "./text/model-runner.ts";

interface WorkerScope {
  onmessage: ((ev: MessageEvent<ToPrep>) => void) | null;
  postMessage(msg: FromPrep, transfer?: ArrayBuffer[]): void;
}

const scope = globalThis as unknown as WorkerScope;
let loaded: Promise<MediaPreprocessor> | null = null;

scope.onmessage = async ({ data: msg }) => {
  if (msg.type === "load") {
    loaded = MediaPreprocessor.load(msg.dir, msg.kinds);
    loaded.then(
      () => scope.postMessage({ type: "loaded" }),
      (e: unknown) => scope.postMessage({ type: "load_error", message: e instanceof Error ? e.message : String(e) }),
    );
    return;
  }
  try {
    if (!loaded) throw new Error("the preprocessor is not loaded");
    const out = await (await loaded).prepare(msg.input);
    scope.postMessage({ type: "prepared", id: msg.id, data: out.data, dims: out.dims }, [out.data.buffer as ArrayBuffer]);
  } catch (e) {
    const safe = e instanceof MediaInputError;
    scope.postMessage({ type: "failed", id: msg.id, message: safe ? e.message : e instanceof Error ? e.message : String(e), safe });
  }
};
