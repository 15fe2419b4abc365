// `npm run bench -- --gguf <file.gguf | keyword>[,…]`: kiln against llama.cpp on the same GGUF file. kiln imports the
// file (timed, with the import's peak RSS) and serves it over HTTP; llama.cpp loads the very file in a process of its
// own; both run the main bench's prompts and token counts at each level, and the issue's targets are marked.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { loadavg } from "node:os";
import { basename, join } from "node:path";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { FORMATS, MODELS_BASE, NEW_TOKENS, ROUNDS } from "./bench-model.ts";
import { resolveGgufSources } from "./gguf-files.ts";
import { timedImport } from "./gguf-import.ts";
import { startLlamaChild } from "./gguf-llama.ts";
import { raceLevels } from "./gguf-levels.ts";
import { ggufTargetLines, renderGgufTable, rssLine } from "./gguf-report.ts";
import { PREFILL_CHUNK } from "./llama-cpp.ts";

const FILES = (process.env.KILN_BENCH_GGUF_FILES ?? "").split(",").filter(Boolean);
const LEVELS = (process.env.KILN_BENCH_LEVELS ?? "1,4,8,16").split(",").map(Number);

const load = () => {
  const cores = readCpuInfo().logicalCores;
  const l = loadavg()[0]!;
  return `load average ${l.toFixed(1)} on ${cores} cores${l > cores ? " (other processes are running: figures are unreliable, llama.cpp's most)" : ""}`;
};

test(
  "kiln against llama.cpp on the same GGUF file",
  async () => {
    expect(FILES.length).toBeGreaterThan(0);
    const threads = navigator.hardwareConcurrency;
    const sources = await resolveGgufSources(FILES, join(MODELS_BASE, "gguf"));
    const reports: string[] = [];
    for (const source of sources) {
      const name = basename(source.path).replace(/\.gguf$/i, "");
      console.log(`\n${source.arg}: importing ${source.path} …`);
      // One models dir per file, emptied first: the import is timed every run, and the server serves only it.
      const modelsDir = join(MODELS_BASE, "gguf-imports", name);
      rmSync(modelsDir, { recursive: true, force: true });
      const imported = await timedImport(source.path, modelsDir);
      console.log(`  imported ${imported.id} in ${imported.seconds.toFixed(1)} s, peak RSS ${imported.peakRssMb.toFixed(0)} MB`);
      const llama = await startLlamaChild(source.path, threads);
      if ("skipped" in llama) throw new Error(`llama.cpp could not run: ${llama.skipped}`);
      const loadBefore = load();
      const race = await raceLevels({ modelsDir, id: imported.id, llama, levels: LEVELS, newTokens: NEW_TOKENS, rounds: ROUNDS, threads });
      reports.push([
        "",
        `== ${source.arg} (${source.path})`,
        `cpu: ${describeCpu(readCpuInfo())}; at the start ${loadBefore}, at the end ${load()}`,
        `${source.writtenS !== undefined ? `file written by kiln's GGUF writer in ${source.writtenS.toFixed(0)} s; ` : ""}kiln import (kiln models import --force, formats int8, q4, q4f16): ${imported.seconds.toFixed(1)} s, import process peak RSS ${imported.peakRssMb.toFixed(0)} MB`,
        `kiln: model ${imported.id}, ${FORMATS}, over HTTP, streaming clients, fresh prompts of ${race.promptTokens} tokens, ${NEW_TOKENS} new tokens, greedy, ${threads} threads, median of ${ROUNDS} rounds`,
        `llama.cpp: node-llama-cpp prebuilt CPU binary on the same file (loaded in ${(llama.loadMs / 1000).toFixed(1)} s), ${threads} threads, flash attention ${llama.flashAttention}, a static batch of one row per client, one llama_decode per step, prompts fed ≤ ${PREFILL_CHUNK} tokens a decode, greedy, median of ${ROUNDS} rounds`,
        "wall = generated tokens / time from request (or prefill) start; decode = tokens after the first / time after it (kiln: clients / TPOT p50); llama.cpp's TTFT is its batch's prefill (every row's first token comes with it), ms",
        renderGgufTable(race.rows),
        ...rssLine(race.rss),
        ...ggufTargetLines(race.rows, race.rss),
      ].join("\n"));
      console.log(reports[reports.length - 1]);
    }
    if (sources.length > 1) console.log(`\nall files:${reports.join("\n")}`);
  },
  // Several files, each imported and raced (a 1B-class file takes most of an hour on two cores).
  14_400_000,
);
