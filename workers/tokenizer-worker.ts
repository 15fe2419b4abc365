// Bun worker entry: tokenizes large prompts off the main thread, so a long prompt never stalls other requests.
import { AutoTokenizer, env, type PreTrainedTokenizer } from "@huggingface/transformers";
import type { EncodeReply, EncodeRequest } from "../src/inference/tokenizer-protocol.ts";

env.allowRemoteModels = false;
env.allowLocalModels = true;

interface WorkerScope {
  onmessage: ((ev: MessageEvent<EncodeRequest>) => void) | null;
  postMessage(msg: EncodeReply, transfer?: ArrayBuffer[]): void;
}

const scope = globalThis as unknown as WorkerScope;
const tokenizers = new Map<string, Promise<PreTrainedTokenizer>>();

function tokenizerFor(dir: string): Promise<PreTrainedTokenizer> {
  let t = tokenizers.get(dir);
  if (!t) {
    t = AutoTokenizer.from_pretrained(dir, { local_files_only: true });
    tokenizers.set(dir, t);
    t.catch(() => tokenizers.delete(dir));
  }
  return t;
}

scope.onmessage = async ({ data }) => {
  try {
    const tok = await tokenizerFor(data.dir);
    const ids = Int32Array.from(tok.encode(data.text, { add_special_tokens: false }));
    scope.postMessage({ id: data.id, ids }, [ids.buffer as ArrayBuffer]);
  } catch (e) {
    scope.postMessage({ id: data.id, error: e instanceof Error ? e.message : String(e) });
  }
};
