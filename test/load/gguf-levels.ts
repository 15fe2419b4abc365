// One GGUF file's race: kiln serving its import over HTTP and llama.cpp on the file itself (a process each), level by
// level, kiln's rounds first and llama.cpp's right after, so both see the same load on a shared box.
import { expect } from "bun:test";
import { loadTokenizer } from "../../src/inference/tokenizer.ts";
import { readModelFolder } from "../../src/models/registry.ts";
import { tempDir } from "../helpers/kiln.ts";
import { benchServerEnv } from "./bench-model.ts";
import { freshChat } from "./fresh-chat.ts";
import type { LlamaChild } from "./gguf-llama.ts";
import type { GgufLevel, RssFigures } from "./gguf-report.ts";
import { medianBy, summarize, type LevelSummary } from "./metrics.ts";
import { type ServerProcess, startServerProcess } from "./server-process.ts";
import { streamChat } from "./stream-client.ts";

export interface RaceInput {
  /** The import's models dir and model id. */
  modelsDir: string;
  id: string;
  llama: LlamaChild;
  levels: number[];
  newTokens: number;
  rounds: number;
  threads: number;
}

/** The prefix-cache budget kiln logs at start (`prefix cache`, mib_per_worker), or null. */
export function prefixCacheMib(log: string): number | null {
  for (const line of log.split("\n")) {
    if (!line.includes('"prefix cache"')) continue;
    try {
      const v = JSON.parse(line).mib_per_worker;
      if (typeof v === "number") return v;
    } catch { /* another line */ }
  }
  return null;
}

/** kiln's rounds at each level on one server: the wall rates' summaries, each level's median round. */
async function kilnLevels(server: ServerProcess, i: RaceInput, body: () => Record<string, unknown>, each: (clients: number, kiln: LevelSummary, rounds: LevelSummary[]) => Promise<void>): Promise<void> {
  await streamChat(server.url, server.key, { ...body(), max_tokens: 4 }); // warm-up
  for (const clients of i.levels) {
    const rounds: LevelSummary[] = [];
    for (let r = 0; r < i.rounds; r++) {
      const t0 = performance.now();
      const timings = await Promise.all(Array.from({ length: clients }, () => streamChat(server.url, server.key, body())));
      rounds.push(summarize(clients, timings, performance.now() - t0));
      for (const t of timings) expect(t.outputTokens).toBe(i.newTokens);
    }
    await each(clients, medianBy(rounds, (x) => x.outputTokPerSec), rounds);
  }
}

/**
 * Races kiln (prefix cache off, the memory target's condition; fresh prompts would gain nothing from it) against
 * llama.cpp level by level, then runs kiln's requests again on a server with the cache on at its default budget, for
 * the memory the cache takes.
 */
export async function raceLevels(i: RaceInput): Promise<{ rows: GgufLevel[]; rss: RssFigures; promptTokens: number }> {
  const tokenizer = await loadTokenizer(readModelFolder(`${i.modelsDir}/${i.id}`, i.id));
  // Every request and every llama.cpp row its own prompt of one length (test/load/fresh-chat.ts says why).
  const fresh = await freshChat(tokenizer);
  const body = () => ({ model: i.id, messages: [{ role: "user", content: fresh.next() }], max_tokens: i.newTokens, temperature: 0, ignore_eos: true });
  const rows: GgufLevel[] = [];
  const off = await startRaceServer(i, { KILN_PREFIX_CACHE: "0" });
  let kilnIdleMb: number;
  let kilnMb: number;
  try {
    kilnIdleMb = await off.rssMb();
    await kilnLevels(off, i, body, async (clients, kiln, rounds) => {
      const llama = await i.llama.level(await fresh.idsFor(clients), i.newTokens, i.rounds);
      console.log(`@${clients}: kiln ${kiln.outputTokPerSec.toFixed(1)} tok/s (rounds ${rounds.map((x) => x.outputTokPerSec.toFixed(1)).join(", ")}), llama.cpp ${llama.wall.toFixed(1)} tok/s`);
      rows.push({ clients, kiln, llama });
    });
    kilnMb = await off.peakRssMb();
  } finally {
    expect(await off.stop()).toBe(0);
  }
  const llamaAfterLoadMb = i.llama.rssAfterLoadMb;
  const llamaMb = await i.llama.close();
  const on = await startRaceServer(i, {});
  try {
    await kilnLevels(on, i, body, async () => {});
    const cacheOn = { budgetMib: prefixCacheMib(on.log()), peakMb: await on.peakRssMb() };
    return { rows, rss: { kilnMb, kilnIdleMb, cacheOn, llamaMb, llamaAfterLoadMb }, promptTokens: fresh.promptIds.length };
  } finally {
    expect(await on.stop()).toBe(0);
  }
}

/**
 * A server of the imported model only (no built-in beside it), at info level so the prefix-cache budget is logged
 * (kept, not echoed: every request logs a line there).
 */
function startRaceServer(i: RaceInput, env: Record<string, string>): Promise<ServerProcess> {
  return startServerProcess({
    dataDir: tempDir("kiln-gguf-bench-"), modelsDir: i.modelsDir, logLevel: "info", echo: false,
    env: { ...benchServerEnv(i.threads), KILN_BUILTIN_MODELS: "none", ...env },
  });
}
