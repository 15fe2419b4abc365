// The built-in tool loop over a scripted core, with web_search as the built-in tool: searches run between steps,
// block indexes keep counting, usage is summed over the steps and settled once, the number of searches is bounded,
// a forced search whose model cannot write its query searches for the user's last message, and a call cut by the
// token limit is not run.
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { usage } from "../../../src/db/schema.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import type { CoreEvent } from "../../../src/inference/blocks.ts";
import type { Conversation } from "../../../src/inference/conversation.ts";
import { type TextRunDeps, startRun } from "../../../src/inference/text-run.ts";
import { resolvePromptFormat } from "../../../src/inference/prompt-format.ts";
import type { CoreRequest } from "../../../src/inference/request.ts";
import type { ToolDef } from "../../../src/inference/tool-def.ts";
import { withBuiltins } from "../../../src/inference/tool-loop.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import type { SeqEvent, SeqRequest } from "../../../src/scheduler/scheduler.ts";
import { type SearchBackend, SearchError } from "../../../src/tools/search-backend.ts";
import { FORCED_QUERY_TOKENS, WEB_SEARCH_FUNCTION, webSearchTool } from "../../../src/tools/web-search.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

const model: ModelEntry = { ...parseManifest(fakeManifest("loop-model-v1"), ["fp32"]), dir: "/nowhere" };
const CALL = '<tool_call>\n{"name": "web_search", "arguments": {"query": "paris"}}\n</tool_call>';

/** A core whose k-th submission writes script[k] (the last one repeats) and whose k-th prompt is 10·k tokens. */
async function setup(script: { text: string; reason?: "stop" | "length"; cached?: number }[], opts: { thinking?: boolean } = {}) {
  const db = await openDatabase(tempDir("kiln-loop-"));
  const team = await createTeam(db, "t");
  const key = await createKey(db, team.id, "k");
  const submitted: SeqRequest[] = [];
  const renders: { conv: Conversation; tools: ToolDef[] | null }[] = [];
  const deps: TextRunDeps = {
    db, logger: memoryLogger(), shutdown: { draining: false },
    scheduler: {
      assertServing: () => {},
      submit(reqs: SeqRequest[]) {
        const step = script[Math.min(submitted.length, script.length - 1)]!;
        submitted.push(...reqs);
        // Every step gets a worker at once, as the real scheduler tells its caller.
        for (const r of reqs) r.onStart?.();
        return reqs.map(() => (async function* (): AsyncGenerator<SeqEvent> {
          yield { type: "delta", text: step.text, tokens: 5 };
          yield { type: "finish", finish: { seqId: "s", reason: step.reason ?? "stop", promptTokens: 0, outputTokens: 5, cachedTokens: step.cached ?? 0 } };
        })());
      },
    },
    tokenizers: {
      get: async () => ({
        format: resolvePromptFormat(undefined, "<tool_call></tool_call><think></think>", () => false), stopTokenIds: [], specialTokens: new Map(), vocabSize: 0x110000, minTokens: () => 0, decodeText: () => "",
        // One token per character, and </think> one token, as the worker needs to see the block close.
        encodeText: (t: string) => t.split(/(<\/think>)/).filter(Boolean).flatMap((p) => (p === "</think>" ? [1000] : [...p].map((c) => c.charCodeAt(0)))),
        renderChat: (conv: Conversation, tools: ToolDef[] | null) => (renders.push({ conv: structuredClone(conv), tools }), opts.thinking ? "prompt<think>\n" : "prompt"),
        encodePrompt: async () => new Array(10 * renders.length).fill(1),
      }),
    },
  };
  const scope = { requestId: `req_${crypto.randomUUID()}`, teamId: team.id, keyId: key.id, endpoint: "responses" };
  return { deps, db, scope, submitted, renders };
}

const base = (maxTokens: number | null = null): CoreRequest => ({
  conversation: [{ role: "user", parts: [{ type: "text", text: "hi there" }] }],
  tools: null, toolChoice: "auto", answerFormat: { kind: "text" }, n: 1, maxTokens, temperature: 0, topP: 1, seed: 1, stop: [], ignoreEos: false,
});

function backend(fail = false) {
  const queries: string[] = [];
  const b: SearchBackend = {
    async search(q) {
      queries.push(q);
      if (fail) throw new SearchError("the search backend answered HTTP 502");
      return [{ title: "Paris", url: "https://paris.example", snippet: "capital" }, { title: "France", url: "https://france.example", snippet: "" }];
    },
  };
  return { b, queries };
}

async function run(s: Awaited<ReturnType<typeof setup>>, request: CoreRequest, on: ModelEntry = model) {
  const r = await startRun(s.deps, { scope: s.scope, model: on, request, clientSignal: null, timeoutMs: null });
  const events: CoreEvent[] = [];
  for await (const ev of r.choices[0]!) events.push(ev);
  return { events, settlement: await r.settled };
}

describe("tool loop", () => {
  test("a call to web_search runs the search and a second step in the same stream: indexes continue, usage is summed and settled once", async () => {
    const s = await setup([{ text: `Let me look. ${CALL}`, cached: 3 }, { text: "Paris [1] is the capital.", cached: 16 }]);
    const { b, queries } = backend();
    const { events, settlement } = await run(s, withBuiltins(base(), [webSearchTool(b, 3)], null));
    expect(queries).toEqual(["paris"]);
    const starts = events.filter((e) => e.type === "block_start");
    expect(starts.map((e) => [e.index, e.block.kind])).toEqual([[0, "text"], [1, "builtin_call"], [2, "text"]]);
    expect(starts[1]!.block).toMatchObject({ kind: "builtin_call", name: "web_search", arguments: '{"query":"paris"}' });
    const end = events.find((e) => e.type === "block_end" && e.index === 1);
    expect(end).toMatchObject({ result: { status: "completed", detail: { sources: [{ n: 1, url: "https://paris.example" }, { n: 2, url: "https://france.example" }] } } });
    expect(events.filter((e) => e.type === "finish")).toEqual([{ type: "finish", reason: "stop", stopSequence: null }]);
    // Prompts of 10 and 20 tokens (3 and 16 of them from the prefix cache), 5 output tokens per step.
    expect(settlement.usage).toMatchObject({ inputTokens: 30, outputTokens: 10, cachedTokens: 19 });
    expect(events.filter((e) => e.type === "usage").at(-1)).toMatchObject({ usage: { inputTokens: 30, outputTokens: 10, cachedTokens: 19 } });
    const rows = sqliteOf(s.db).select().from(usage).where(eq(usage.requestId, s.scope.requestId)).all();
    expect(rows.map((r) => [r.status, r.inputTokens, r.outputTokens, r.cachedTokens])).toEqual([["completed", 30, 10, 19]]);
    // The second step saw the call and its numbered results.
    const conv = s.renders[1]!.conv;
    expect(conv.at(-2)).toMatchObject({ role: "assistant", parts: [{ type: "text", text: "Let me look. " }, { type: "tool_call", name: "web_search", arguments: { query: "paris" } }] });
    const result = conv.at(-1)!.parts[0]!;
    expect(result).toMatchObject({ type: "tool_result", isError: false });
    expect(JSON.stringify(result)).toContain("[1] Paris — https://paris.example — capital");
    expect(s.renders[1]!.tools!.map((t) => t.function.name)).toEqual(["web_search"]);
  });

  test("on a multimodal model, a search result holding a placeholder's text reaches the next step as plain text", async () => {
    const s = await setup([{ text: `Let me look. ${CALL}` }, { text: "Done." }]);
    const b: SearchBackend = { search: async () => [{ title: "LLaVA docs", url: "https://docs.example", snippet: "write <image> then <|audio|> in the prompt" }] };
    const media = {
      layout: "kiln-omni",
      image: { token: "<image>", tokenId: 900, size: 56, patchSize: 14, tokens: 16 },
      audio: { token: "<|audio|>", tokenId: 901, sampleRate: 16000, hopLength: 160, nMels: 80, encoderDsFactor: 320, stackFactor: 8, chunkSeconds: 30 },
    };
    const { events } = await run(s, withBuiltins(base(), [webSearchTool(b, 3)], null), { ...model, media });
    expect(events.filter((e) => e.type === "finish")).toEqual([{ type: "finish", reason: "stop", stopSequence: null }]);
    const text = JSON.stringify(s.renders[1]!.conv.at(-1)!.parts[0]);
    expect(text).not.toContain("<image>");
    expect(text).not.toContain("<|audio|>");
    expect(text).toContain("write <\u2060image> then <\u2060|audio|> in the prompt");
  });

  test("searches per response are bounded: past the limit the tool is no longer offered and the loop ends", async () => {
    const s = await setup([{ text: CALL }]);
    const { b, queries } = backend();
    const { events } = await run(s, withBuiltins(base(), [webSearchTool(b, 2)], null));
    expect(queries.length).toBe(2);
    expect(s.renders.length).toBe(3);
    expect(s.renders[2]!.tools).toBeNull();
    // Sources are numbered across the response: the second search's start at 3.
    const second = events.filter((e) => e.type === "block_end" && e.result)[1];
    expect(second).toMatchObject({ result: { detail: { sources: [{ n: 3 }, { n: 4 }] } } });
    expect(events.at(-1)).toMatchObject({ type: "finish" });
  });

  test("a forced search: its call gets a small budget, a model that cannot write it searches for the last user message; a failed search is told to the model", async () => {
    const s = await setup([{ text: '{"query": "unterminated', reason: "length" }, { text: "I could not search." }]);
    const { b, queries } = backend(true);
    const { events, settlement } = await run(s, withBuiltins(base(200), [webSearchTool(b, 3)], WEB_SEARCH_FUNCTION));
    expect(s.submitted[0]!.params.maxTokens).toBe(FORCED_QUERY_TOKENS);
    expect(s.submitted[1]!.params.maxTokens).toBe(195);
    expect(queries).toEqual(["hi there"]);
    // The unfinished call text is not shown: the search block comes first.
    const starts = events.filter((e) => e.type === "block_start");
    expect(starts.map((e) => [e.index, e.block.kind])).toEqual([[0, "builtin_call"], [1, "text"]]);
    expect(events.find((e) => e.type === "block_end" && e.index === 0)).toMatchObject({ result: { status: "failed", detail: { reason: "the search backend answered HTTP 502" } } });
    const result = s.renders[1]!.conv.at(-1)!.parts[0]!;
    expect(result).toMatchObject({ type: "tool_result", isError: true });
    expect(JSON.stringify(result)).toContain("The web search failed: the search backend answered HTTP 502");
    expect(settlement).toMatchObject({ status: "completed", usage: { inputTokens: 30, outputTokens: 10 } });
  });

  test("a web_search call the token limit cut is not run: the response ends with length and shows no call", async () => {
    const s = await setup([{ text: '<tool_call>\n{"name": "web_search", "arguments": {"query": "par', reason: "length" }]);
    const { b, queries } = backend();
    const { events } = await run(s, withBuiltins(base(), [webSearchTool(b, 3)], null));
    expect(queries).toEqual([]);
    expect(events.filter((e) => e.type === "block_start")).toEqual([]);
    expect(events.at(-1)).toEqual({ type: "finish", reason: "length", stopSequence: null });
  });

  test("a forced search after thinking: the step's token cap shrinks its thinking budget too, so the model can still write its query", async () => {
    // What the worker gives back: the thinking, its close (by the model or the budget), then the call it opened.
    const s = await setup([{ text: `let me think\n</think>\n\n${CALL}` }, { text: "Paris [1]." }], { thinking: true });
    const { b, queries } = backend();
    await run(s, withBuiltins({ ...base(2000), thinkingBudget: 1024 }, [webSearchTool(b, 3)], WEB_SEARCH_FUNCTION));
    expect(s.submitted[0]!.params).toMatchObject({ maxTokens: FORCED_QUERY_TOKENS, thinking: { budget: FORCED_QUERY_TOKENS / 2, closeTokenId: 1000 } });
    expect(queries).toEqual(["paris"]);
  });
});
