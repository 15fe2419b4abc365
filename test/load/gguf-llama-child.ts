// llama.cpp on one GGUF file in a process of its own, so its peak RSS is its own (VmHWM), not the bench's. Driven by
// test/load/gguf-llama.ts: argv <file> <threads>; one JSON line in per level ({prompts, newTokens, rounds}), one out
// (the median run's timing); at the end of stdin it prints its peak RSS and exits.
import { readFileSync } from "node:fs";
import { readGgufMetadata } from "../../src/modelgen/gguf-read.ts";
import { GGUF_FORMATS, type GgufFormat } from "../../src/modelgen/gguf-model.ts";
import { ggufFileType } from "../../src/modelgen/ggml-mix.ts";
import { LlamaCppModel } from "./llama-cpp.ts";
import { loadLlamaCpp } from "./llama-cpp-runtime.ts";

const peakRssMb = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
const send = (msg: object) => process.stdout.write(`${JSON.stringify(msg)}\n`);

const [path, threads] = [process.argv[2]!, Number(process.argv[3])];
const rt = await loadLlamaCpp();
if ("error" in rt) {
  send({ error: rt.error });
  process.exit(0);
}
// The rows name the file's format; a file type kiln's writer does not make keeps q8_0's label (only the figures count).
const fileType = Number(readGgufMetadata(path).kv.get("general.file_type") ?? -1);
const format: GgufFormat = GGUF_FORMATS.find((f) => ggufFileType(f) === fileType) ?? "q8_0";
const started = performance.now();
const model = await LlamaCppModel.openFile(rt.llama, path, format, threads);
send({ ready: true, loadMs: performance.now() - started, rssAfterLoadMb: peakRssMb(), flashAttention: model.flashAttention });

let buffered = "";
for await (const chunk of Bun.stdin.stream()) {
  buffered += new TextDecoder().decode(chunk);
  let cut: number;
  while ((cut = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, cut);
    buffered = buffered.slice(cut + 1);
    const { prompts, newTokens, rounds } = JSON.parse(line) as { prompts: number[][]; newTokens: number; rounds: number };
    try {
      send({ timing: await model.run(prompts, newTokens, rounds) });
    } catch (e) {
      send({ error: (e as Error).message.split("\n")[0] });
    }
  }
}
await model.dispose();
send({ peakRssMb: peakRssMb() });
