// `npm run bench -- --prefix`: the prefix cache against the same server with KILN_PREFIX_CACHE=0, in one sitting on the
// bench model (multi-turn TTFT, clients sharing a long system prompt, fresh prompts beside llama.cpp): one table.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { loadavg } from "node:os";
import { join } from "node:path";
import { loadTokenizer } from "../../src/inference/tokenizer.ts";
import { readModelFolder } from "../../src/models/registry.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { tempDir } from "../helpers/kiln.ts";
import { BENCH_DTYPES, benchServerEnv, DTYPE, ensureBenchModel, FORMATS, MODELS_BASE, MODELS_DIR, NEW_TOKENS, ROUNDS, SPEC } from "./bench-model.ts";
import { freshChat } from "./fresh-chat.ts";
import { llamaLevelForBench, openLlamaForBench } from "./llama-cpp-section.ts";
import { llamaCppBench } from "./llama-cpp.ts";
import { llamaFormatsLine } from "./llama-cpp-report.ts";
import { type LevelSummary, medianBy, percentile } from "./metrics.ts";
import { cacheLine, type Conversation, type FreshLevel, medianConversation, type OnOff, prefixTargetLines, renderPrefixTable, type Shared } from "./prefix-report.ts";
import { freshRound, messagesHistory, responsesChain, scrape, sharedSystem, type Target, warmUp } from "./prefix-scenarios.ts";
import { startServerProcess } from "./server-process.ts";
import { oneTokenWords, textOfTokens } from "./token-text.ts";

/** Conversation turns, clients sharing the system prompt, and the fresh-prompt levels (the README test makes them small). */
const TURNS = Number(process.env.KILN_BENCH_PREFIX_TURNS ?? 10);
/** Conversations per format with the cache on, their turns' TTFT taken as medians. */
const CONVERSATIONS = Number(process.env.KILN_BENCH_PREFIX_CONVERSATIONS ?? 3);
const CLIENTS = Number(process.env.KILN_BENCH_PREFIX_CLIENTS ?? 16);
const LEVELS = (process.env.KILN_BENCH_PREFIX_LEVELS ?? `1,${CLIENTS}`).split(",").map(Number);
/** Token counts of the texts (the model's tokenizer), and the short replies that keep the history growing by a turn's input. */
const SYSTEM_TOKENS = 1500;
const QUESTION_TOKENS = 50;
const TURN_TOKENS = 100;
const TURN_REPLY_TOKENS = 16;
const SHARED_REPLY_TOKENS = 8;

test(
  "prefix cache: multi-turn TTFT, a shared system prompt and fresh prompts, cache on vs off",
  async () => {
    const modelDir = await ensureBenchModel(DTYPE, BENCH_DTYPES);
    const threads = navigator.hardwareConcurrency;
    const tokenizer = await loadTokenizer(readModelFolder(modelDir, SPEC.id));
    const count = (text: string) => tokenizer.encodeText(text).length;
    const words = oneTokenWords(count);
    // New every sitting: whatever an earlier phase or run left in a cache cannot match these texts.
    const nonce = randomBytes(4).toString("hex");
    const text = (tokens: number, seed: string, head: string) => textOfTokens(tokens, { count, words, seed: `${nonce} ${seed}`, head });
    const system = text(SYSTEM_TOKENS, "system", `Session ${nonce}.`);
    const questions = Array.from({ length: CLIENTS }, (_, i) => text(QUESTION_TOKENS, `question ${i}`, `Question ${i + 1}:`));
    // Each conversation its own texts (both servers get the same ones), so neither can reuse the other's turns.
    const turns = (label: string) => Array.from({ length: TURNS }, (_, i) => text(TURN_TOKENS, `${label} ${i}`, `(${label} ${nonce}, turn ${i + 1})`));
    const fresh = await freshChat(tokenizer);

    // llama.cpp is opened first, as in the main bench, and runs right after kiln's levels.
    const llama = await openLlamaForBench({ spec: SPEC, ggufDir: join(MODELS_BASE, "gguf"), threads });
    const llamaInput = { promptsFor: fresh.idsFor, newTokens: NEW_TOKENS, rounds: ROUNDS };

    // Both servers run through the sitting with the bench's settings; only the cache switch differs. Only one works at a time.
    const start = (cache: "1" | "0") => startServerProcess({ dataDir: tempDir(`kiln-bench-prefix-${cache}-`), modelsDir: MODELS_DIR, env: { ...benchServerEnv(threads), KILN_PREFIX_CACHE: cache } });
    const [onServer, offServer] = await Promise.all([start("1"), start("0")]);
    const on: Target = { url: onServer.url, key: onServer.key, model: SPEC.id };
    const off: Target = { url: offServer.url, key: offServer.key, model: SPEC.id };
    let responses: OnOff<Conversation>, messages: OnOff<Conversation>, shared: OnOff<Shared>;
    const freshLevels: FreshLevel[] = [];
    let cacheLines: string[];
    try {
      for (const t of [on, off]) await warmUp(t, fresh);

      // 1. Conversations: which side goes first alternates between the two. With the cache, each turn's TTFT is the
      // median of CONVERSATIONS conversations (its own texts each); without it one, whose growth is plain anyway.
      const onRuns = async <T>(run: (label: string) => Promise<T>) => {
        const out: T[] = [];
        for (let k = 0; k < CONVERSATIONS; k++) out.push(await run(String(k)));
        return out;
      };
      const rOn = medianConversation(await onRuns((k) => responsesChain(on, turns(`responses ${k}`), TURN_REPLY_TOKENS)));
      const rOff = await responsesChain(off, turns("responses 0"), TURN_REPLY_TOKENS);
      responses = { on: rOn, off: rOff };
      console.log(`Responses chain TTFT ms, on: ${rOn.ttftMs.map((v) => v.toFixed(0)).join(" ")}; off: ${rOff.ttftMs.map((v) => v.toFixed(0)).join(" ")}`);
      const mOff = await messagesHistory(off, turns("messages 0"), TURN_REPLY_TOKENS);
      const mOn = medianConversation(await onRuns((k) => messagesHistory(on, turns(`messages ${k}`), TURN_REPLY_TOKENS)));
      messages = { on: mOn, off: mOff };
      console.log(`Messages history TTFT ms, on: ${mOn.ttftMs.map((v) => v.toFixed(0)).join(" ")}; off: ${mOff.ttftMs.map((v) => v.toFixed(0)).join(" ")}`);

      // 2. Every client at once after one system prompt.
      const sharedRun = async (t: Target, side: string) => {
        const s = await sharedSystem(t, system, questions, SHARED_REPLY_TOKENS);
        console.log(`shared system prompt, cache ${side}: TTFT p50 ${percentile(s.ttftMs, 50).toFixed(0)} ms, p95 ${percentile(s.ttftMs, 95).toFixed(0)} ms, prefill tokens computed ${s.prefillTokens ?? "n/a"}`);
        return s;
      };
      shared = { on: await sharedRun(on, "on"), off: await sharedRun(off, "off") };

      // 3. Fresh prompts: an uncounted round of each side first, then alternating rounds, then llama.cpp at the same rows.
      for (const t of [on, off]) await freshRound(t, fresh, LEVELS[LEVELS.length - 1]!, NEW_TOKENS);
      for (const clients of LEVELS) {
        const rounds = { on: [] as LevelSummary[], off: [] as LevelSummary[] };
        for (let r = 0; r < ROUNDS; r++) {
          for (const side of r % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const)) rounds[side].push(await freshRound(side === "on" ? on : off, fresh, clients, NEW_TOKENS));
        }
        const [medOn, medOff] = [medianBy(rounds.on, (x) => x.outputTokPerSec), medianBy(rounds.off, (x) => x.outputTokPerSec)];
        freshLevels.push({ clients, on: medOn.outputTokPerSec, off: medOff.outputTokPerSec });
        console.log(`fresh prompts ${clients} clients: on ${medOn.outputTokPerSec.toFixed(1)} tok/s, off ${medOff.outputTokPerSec.toFixed(1)} tok/s (load ${loadavg()[0]!.toFixed(2)})`);
        await llamaLevelForBench(llama, llamaInput, clients);
      }
      cacheLines = [cacheLine("cache on server after the sitting", await scrape(on.url), SPEC.id), cacheLine("cache off server after the sitting", await scrape(off.url), SPEC.id)];
    } finally {
      const codes = await Promise.all([onServer.stop(), offServer.stop()]);
      expect(codes).toEqual([0, 0]);
    }

    const ran = llama.skipped ? undefined : llamaCppBench(llama.models, llama.levels, LEVELS);
    if (ran) for (const [k, level] of freshLevels.entries()) level.llama = { wall: ran.best[k]!.wall, format: ran.best[k]!.format };
    for (const m of llama.models) await m.dispose();

    const results = { responses, messages, shared, sharedClients: CLIENTS, systemTokens: SYSTEM_TOKENS, fresh: freshLevels };
    const cpu = readCpuInfo();
    console.log(`\ncpu: ${describeCpu(cpu)}; load average ${loadavg()[0]!.toFixed(1)} on ${cpu.logicalCores} cores`);
    console.log(
      `model ${SPEC.id}, ${FORMATS}, ${threads} threads; two servers, KILN_PREFIX_CACHE=1 and 0, otherwise alike; ` +
        `conversations of ${TURNS} turns (cache on: each turn's median over ${CONVERSATIONS}) of ${TURN_TOKENS}-token inputs, ${TURN_REPLY_TOKENS}-token replies at most (Responses: a one-field JSON answer; Messages: cut at "|"), temperature 0; ` +
        `${CLIENTS} clients with a ${SYSTEM_TOKENS}-token system prompt and ${QUESTION_TOKENS}-token questions, ${SHARED_REPLY_TOKENS} tokens each; ` +
        `fresh prompts of ${fresh.promptIds.length} tokens (a different one per request), ${NEW_TOKENS} tokens each, median of ${ROUNDS} rounds\n`,
    );
    console.log(renderPrefixTable(results));
    console.log(prefixTargetLines(results).join("\n"));
    console.log(cacheLines.join("\n"));
    console.log(ran ? llamaFormatsLine(ran.all) : `llama.cpp rows skipped: ${llama.skipped}`);
  },
  3_600_000,
);
