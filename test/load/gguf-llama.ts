// The bench's side of test/load/gguf-llama-child.ts: llama.cpp on a GGUF file in its own process, one level at a time.
import { join } from "node:path";
import { ratesOf, type RunTiming } from "./llama-cpp.ts";
import type { Rates } from "./llama-cpp.ts";

export interface LlamaLevelResult extends Rates {
  batch: number;
  /** Every row of a static batch gets its first token when the prefill ends: its TTFT, p50 and p95 alike. */
  prefillMs: number;
}

export interface LlamaChild {
  loadMs: number;
  rssAfterLoadMb: number;
  flashAttention: string;
  level(prompts: number[][], newTokens: number, rounds: number): Promise<LlamaLevelResult>;
  /** Ends the process; resolves to its peak RSS (VmHWM) in MB. */
  close(): Promise<number>;
}

/** Starts the child on `path`; `{skipped}` when node-llama-cpp cannot load there (the bench says why). */
export async function startLlamaChild(path: string, threads: number): Promise<LlamaChild | { skipped: string }> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "gguf-llama-child.ts"), path, String(threads)], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  const next = async (): Promise<Record<string, any>> => {
    while (!buffered.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`llama.cpp child exited (${await proc.exited}) before answering`);
      buffered += decoder.decode(value, { stream: true });
    }
    const cut = buffered.indexOf("\n");
    const line = buffered.slice(0, cut);
    buffered = buffered.slice(cut + 1);
    return JSON.parse(line);
  };
  const hello = await next();
  if (hello.error) {
    await proc.exited;
    return { skipped: hello.error };
  }
  return {
    loadMs: hello.loadMs,
    rssAfterLoadMb: hello.rssAfterLoadMb,
    flashAttention: hello.flashAttention,
    async level(prompts, newTokens, rounds) {
      proc.stdin.write(`${JSON.stringify({ prompts, newTokens, rounds })}\n`);
      await proc.stdin.flush();
      const r = await next();
      if (r.error) throw new Error(`llama.cpp: ${r.error}`);
      const t = r.timing as RunTiming;
      return { batch: t.batch, prefillMs: t.prefillMs, ...ratesOf(t) };
    },
    async close() {
      await proc.stdin.end();
      const r = await next();
      await proc.exited;
      return r.peakRssMb as number;
    },
  };
}
