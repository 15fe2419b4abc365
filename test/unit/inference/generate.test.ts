// The core over a fake scheduler and tokenizer: prompt building, forced prefixes, block events, usage counts and errors.
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../src/errors/api-error.ts";
import { type CoreEvent, collectChoice } from "../../../src/inference/blocks.ts";
import type { CoreDeps } from "../../../src/inference/core-deps.ts";
import { prepareGeneration, submitGeneration } from "../../../src/inference/generate.ts";
import { HERMES_TOOL_CALL, resolvePromptFormat, THINK } from "../../../src/inference/prompt-format.ts";
import type { CoreRequest } from "../../../src/inference/request.ts";
import type { ModelTokenizer } from "../../../src/inference/tokenizer.ts";
import { parseManifest } from "../../../src/models/manifest.ts";
import type { ModelEntry } from "../../../src/models/registry.ts";
import type { SeqEvent, SeqRequest } from "../../../src/scheduler/scheduler.ts";
import { fakeManifest } from "../../helpers/fake-model.ts";

const model: ModelEntry = { ...parseManifest(fakeManifest("core-model-v1", { context_length: 256 }), ["fp32"]), dir: "/nowhere" };

/** One character per token; the "template" prints role: text lines so tests can read the prompt. */
function fakeTokenizer(rendered: string[]): ModelTokenizer {
  return {
    format: resolvePromptFormat(undefined, "<tool_call> <think></think>", () => false),
    stopTokenIds: [9],
    specialTokens: new Map(),
    vocabSize: 0x110000,
    encodeText: (t) => [...t].map((c) => c.charCodeAt(0)),
    decodeText: (ids) => String.fromCharCode(...ids),
    renderChat(conv, tools) {
      const text = conv.map((t) => `${t.role}: ${t.parts.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("")}\n`).join("") + (tools ? `tools: ${tools.length}\n` : "");
      rendered.push(text);
      return text;
    },
    encodePrompt: async (r, prefill) => [...r + (prefill ?? "")].map((c) => c.charCodeAt(0)),
    minTokens: () => 0,
  };
}

/** A scheduler whose sequences replay scripted events; records what it was asked. */
function fakeScheduler(script: (i: number) => (SeqEvent | Error)[], submitted: SeqRequest[] = []) {
  return {
    assertServing: () => {},
    submit(reqs: SeqRequest[]) {
      submitted.push(...reqs);
      return reqs.map((_, i) => (async function* () {
        for (const ev of script(i)) {
          if (ev instanceof Error) throw ev;
          yield ev;
        }
      })());
    },
  };
}

const request = (over: Partial<CoreRequest> = {}): CoreRequest => ({
  conversation: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
  tools: null, toolChoice: "none", answerFormat: { kind: "text" }, n: 1, maxTokens: 8,
  temperature: 0, topP: 1, seed: 5, stop: [], ignoreEos: false, ...over,
});

const delta = (text: string, tokens = 1): SeqEvent => ({ type: "delta", text, tokens });
const finish = (reason: "stop" | "length" | "cancelled", outputTokens: number): SeqEvent => ({ type: "finish", finish: { seqId: "s", reason, promptTokens: 0, outputTokens } });

async function run(script: (SeqEvent | Error)[], req = request(), rendered: string[] = [], submitted: SeqRequest[] = []) {
  const deps: CoreDeps = { scheduler: fakeScheduler(() => script, submitted), tokenizers: { get: async () => fakeTokenizer(rendered) } };
  const prepared = await prepareGeneration(deps, model, req);
  const events: CoreEvent[] = [];
  for await (const ev of submitGeneration(deps, prepared, new AbortController().signal)[0]!) events.push(ev);
  return { prepared, events };
}

describe("prepareGeneration", () => {
  test("the JSON instruction leads as its own system turn; the budget fits the context; seeds and stop ids reach the scheduler", async () => {
    const rendered: string[] = [];
    const submitted: SeqRequest[] = [];
    const { prepared } = await run([finish("stop", 0)], request({ answerFormat: { kind: "json" }, n: 1 }), rendered, submitted);
    expect(rendered[0]).toBe("system: Respond with a single JSON object, and nothing else.\nuser: hi\n");
    expect(prepared.maxTokens).toBe(8);
    expect(submitted[0]!.params).toMatchObject({ seed: 5, maxTokens: 8, stopTokenIds: [9] });
  });

  test("a forced tool call ends the prompt with the format's prefix; tool_choice none hides the tools", async () => {
    const tools = [{ type: "function" as const, function: { name: "f" } }];
    const { prepared } = await run([finish("stop", 0)], request({ tools, toolChoice: { name: "f" } }));
    expect(prepared.prefill).toBe('<tool_call>\n{"name": "f", "arguments": ');
    expect(prepared.parser.toolCall).toEqual(HERMES_TOOL_CALL);
    const rendered: string[] = [];
    const none = await run([finish("stop", 0)], request({ tools, toolChoice: "none" }), rendered);
    expect(rendered[0]).not.toContain("tools:");
    expect(none.prepared.parser.toolCall).toBeNull();
  });

  test("a prompt that cannot fit gets the exact 400; no room left also", async () => {
    await expect(run([], request({ maxTokens: 250 }))).rejects.toThrow("(9 in the input, 250 in the output)");
  });
});

describe("choice events", () => {
  test("text, reasoning and a tool call become ordered blocks; reasoning tokens are counted; usage then finish", async () => {
    const tools = [{ type: "function" as const, function: { name: "f" } }];
    const { events, prepared } = await run(
      [delta("<think>", 1), delta("plan", 2), delta("</think>", 1), delta("ok ", 1), delta('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>', 3), finish("stop", 8)],
      request({ tools, toolChoice: "auto" }),
    );
    const r = await collectChoice((async function* () { yield* events; })());
    expect(r.blocks.map((b) => b.kind)).toEqual(["reasoning", "text", "tool_call"]);
    expect(r.blocks[2]).toMatchObject({ name: "f", arguments: '{"a":1}' });
    expect(r.usage).toEqual({ inputTokens: prepared.promptIds.length, outputTokens: 8, reasoningTokens: 4, cachedTokens: 0 });
    expect(r.finish).toBe("tool_calls");
    expect(events.findIndex((e) => e.type === "usage")).toBeLessThan(events.findIndex((e) => e.type === "finish"));
  });

  test("the worker's cached prompt tokens become usage.cachedTokens (absent: 0), never more than the prompt", async () => {
    const cached = (n: number | undefined): SeqEvent => ({ type: "finish", finish: { seqId: "s", reason: "stop", promptTokens: 9, outputTokens: 1, ...(n === undefined ? {} : { cachedTokens: n }) } });
    const usageOf = async (n: number | undefined) => (await run([delta("a"), cached(n)])).events.find((e) => e.type === "usage");
    expect(await usageOf(undefined)).toEqual({ type: "usage", usage: { inputTokens: 9, outputTokens: 1, reasoningTokens: 0, cachedTokens: 0 } });
    expect(await usageOf(5)).toEqual({ type: "usage", usage: { inputTokens: 9, outputTokens: 1, reasoningTokens: 0, cachedTokens: 5 } });
    expect(await usageOf(40)).toEqual({ type: "usage", usage: { inputTokens: 9, outputTokens: 1, reasoningTokens: 0, cachedTokens: 9 } });
  });

  test("a lost worker still reports the tokens generated so far, then the error", async () => {
    const { events } = await run([delta("a", 1), delta("b", 1), ApiError.backendUnavailable("gone")]);
    const [usage, error] = events.slice(-2);
    expect(usage).toEqual({ type: "usage", usage: { inputTokens: 9, outputTokens: 2, reasoningTokens: 0, cachedTokens: 0 } });
    expect(error?.type === "error" && error.error.code).toBe("backend_unavailable");
  });

  test("a forced call that never came is malformed output; a length cut is not an error", async () => {
    const forced = await run([delta("plain"), finish("stop", 1)], request({ tools: [{ type: "function", function: { name: "f" } }], toolChoice: "any" }));
    expect(forced.events.at(-1)).toMatchObject({ type: "error", error: { message: expect.stringContaining("malformed output") } });
    const cut = await run([delta('{"a": '), finish("length", 2)], request({ answerFormat: { kind: "json" } }));
    expect(cut.events.at(-1)).toEqual({ type: "finish", reason: "length", stopSequence: null });
  });

  test("thinking markers are plain text for a model without the reasoning capability", async () => {
    const plain: ModelEntry = { ...model, capabilities: { ...model.capabilities, reasoning: false } };
    const deps: CoreDeps = { scheduler: fakeScheduler(() => [delta("<think>x</think>"), finish("stop", 1)]), tokenizers: { get: async () => fakeTokenizer([]) } };
    const p = await prepareGeneration(deps, plain, request());
    expect(p.parser.thinking).toBeNull();
    const r = await collectChoice(submitGeneration(deps, p, new AbortController().signal)[0]!);
    expect(r.blocks).toEqual([{ kind: "text", text: "<think>x</think>" }]);
    expect(THINK.open).toBe("<think>");
  });
});

/** A tokenizer whose markers are single tokens (ids from 1000), as kiln's own tokenizers have them. */
function markerTokenizer(): ModelTokenizer {
  const markers = ["<think>", "</think>", "<tool_call>", "</tool_call>", "<|im_start|>"];
  const encodeText = (t: string) => t.split(/(<think>|<\/think>|<tool_call>|<\/tool_call>|<\|im_start\|>)/).filter(Boolean)
    .flatMap((piece) => (markers.includes(piece) ? [1000 + markers.indexOf(piece)] : [...piece].map((c) => c.charCodeAt(0))));
  return {
    ...fakeTokenizer([]),
    specialTokens: new Map(markers.map((m, i) => [m, 1000 + i])),
    encodeText,
    renderChat: (conv, _tools, options) => `user: ${conv.length}\nassistant: ${options?.enable_thinking ? "<think>\n" : ""}`,
    encodePrompt: async (r, prefill) => encodeText(r + (prefill ?? "")),
  };
}

describe("a forced call after thinking", () => {
  const tools = [{ type: "function" as const, function: { name: "f", parameters: { type: "object", properties: { a: { type: "integer" } }, required: ["a"], additionalProperties: false } } }];
  const thinkingRequest = (over: Partial<CoreRequest> = {}) =>
    request({ tools, toolChoice: "any", maxTokens: 100, templateOptions: { enable_thinking: true }, thinkingBudget: 256, ...over });
  const prepare = async (req: CoreRequest) => {
    const tok = markerTokenizer();
    const deps = { scheduler: fakeScheduler(() => []), tokenizers: { get: async () => tok } } satisfies CoreDeps;
    return { p: await prepareGeneration(deps, model, req), tok };
  };

  test("the model thinks first: the prompt ends in the open block, and the call's opening is written by the worker after the close", async () => {
    const { p, tok } = await prepare(thinkingRequest());
    const opening = '<tool_call>\n{"name": "f", "arguments": ';
    expect(p.prefill).toBeNull();
    expect(p.promptIds.at(-1)).toBe("\n".charCodeAt(0));
    expect(p.promptIds.at(-2)).toBe(1000);
    // Closed by the model: the framing and the opening are forced; closed by the budget: the whole close is.
    expect(p.constraint?.startAfter).toEqual({ tokenId: 1001, framingIds: tok.encodeText(`\n\n${opening}`) });
    expect(p.thinking).toEqual({ budget: 50, closeTokenId: 1001, forceIds: tok.encodeText(`\n</think>\n\n${opening}`) });
    expect(p.constraint?.closeIds).toEqual(tok.encodeText("}\n</tool_call>").concat([9]));
  });

  test("thinking gets at most half the output when the answer must be a call or JSON; a free answer keeps the asked budget", async () => {
    expect((await prepare(thinkingRequest({ thinkingBudget: 30 }))).p.thinking?.budget).toBe(30);
    expect((await prepare(thinkingRequest({ thinkingBudget: undefined }))).p.thinking?.budget).toBe(50);
    expect((await prepare(thinkingRequest({ tools: null, toolChoice: "none", answerFormat: { kind: "json" } }))).p.thinking?.budget).toBe(50);
    expect((await prepare(thinkingRequest({ tools: null, toolChoice: "none" }))).p.thinking?.budget).toBe(256);
  });

  test("the thinking, then the call the worker opened, come out as a reasoning block and a tool call", async () => {
    const tok = markerTokenizer();
    const script = [delta("plan it"), delta("\n</think>\n\n"), delta('<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>'), finish("stop", 9)];
    const deps = { scheduler: fakeScheduler(() => script), tokenizers: { get: async () => tok } } satisfies CoreDeps;
    const p = await prepareGeneration(deps, model, thinkingRequest());
    const r = await collectChoice(submitGeneration(deps, p, new AbortController().signal)[0]!);
    expect(r.blocks).toEqual([{ kind: "reasoning", text: "plan it" }, { kind: "tool_call", id: expect.any(String), name: "f", arguments: '{"a":1}' }]);
    expect(r.finish).toBe("tool_calls");
  });

  test("special tokens the request gives no meaning to are silent; the markers the parser reads are not", async () => {
    const { p } = await prepare(thinkingRequest());
    expect(p.silentTokenIds).toEqual([1004]);
    const { p: plain } = await prepare(request());
    expect(plain.silentTokenIds.sort()).toEqual([1002, 1003, 1004]);
  });
});

describe("reasoning off (enable_thinking false)", () => {
  // The model answers, then opens a thinking block anyway (random weights do: 6 of 100 seeded chat runs did).
  const script = [delta("answer "), delta("<think>"), delta("more"), delta("</think>"), finish("stop", 4)];
  const runWith = async (tok: ModelTokenizer, req: CoreRequest) => {
    const submitted: SeqRequest[] = [];
    const deps = { scheduler: fakeScheduler(() => script, submitted), tokenizers: { get: async () => tok } } satisfies CoreDeps;
    const p = await prepareGeneration(deps, model, req);
    const r = await collectChoice(submitGeneration(deps, p, new AbortController().signal)[0]!);
    return { p, r, params: submitted[0]!.params };
  };

  test("the one-token open marker is never sampled, and no output is read as a thinking block", async () => {
    const off = await runWith(markerTokenizer(), request({ templateOptions: { enable_thinking: false } }));
    expect(off.params.bannedTokenIds).toEqual([1000]);
    expect(off.p.parser.thinking).toBeNull();
    expect(off.r.blocks.map((b) => b.kind)).toEqual(["text"]);
    // With reasoning on (or left to the template) nothing is banned and the parser reads the markers.
    const on = await runWith(markerTokenizer(), request());
    expect(on.params.bannedTokenIds).toBeUndefined();
    expect(on.p.parser.thinking).toEqual(THINK);
  });

  test("a marker of several tokens cannot be banned: its text stays answer text", async () => {
    const off = await runWith(fakeTokenizer([]), request({ templateOptions: { enable_thinking: false } }));
    expect(off.params.bannedTokenIds).toBeUndefined();
    expect(off.r.blocks).toEqual([{ kind: "text", text: "answer <think>more</think>" }]);
  });
});

describe("cut and malformed calls", () => {
  const tools = [{ type: "function" as const, function: { name: "f" } }];
  test("a call the token limit cut stays a call, marked cut, and the choice ends with length", async () => {
    const { events } = await run([delta('<tool_call>\n{"name": "f", "arguments": {"a": "x'), finish("length", 8)], request({ tools, toolChoice: "auto" }));
    const r = await collectChoice((async function* () { yield* events; })());
    expect(r.blocks).toEqual([{ kind: "tool_call", id: expect.any(String), name: "f", arguments: '{"a": "x', cut: true }]);
    expect(r.finish).toBe("length");
  });

  test("a model that ends its turn inside a call wrote malformed output", async () => {
    const { events } = await run([delta('<tool_call>\n{"name": "f", "arguments": {"a"'), finish("stop", 8)], request({ tools, toolChoice: "auto" }));
    expect(events.at(-1)).toMatchObject({ type: "error", error: { status: 500, message: expect.stringContaining("inside a tool call") } });
  });
});

describe("parallel tool calls off", () => {
  const tools = [{ type: "function" as const, function: { name: "f" } }, { type: "function" as const, function: { name: "g" } }];
  const twoCalls = [delta('<tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>'), delta('<tool_call>\n{"name": "g", "arguments": {}}\n</tool_call>'), finish("stop", 2)];
  const runWith = async (tok: ModelTokenizer, req: CoreRequest) => {
    const submitted: SeqRequest[] = [];
    const deps = { scheduler: fakeScheduler(() => twoCalls, submitted), tokenizers: { get: async () => tok } } satisfies CoreDeps;
    const p = await prepareGeneration(deps, model, req);
    const r = await collectChoice(submitGeneration(deps, p, new AbortController().signal)[0]!);
    return { p, r, params: submitted[0]!.params };
  };

  test("with tools offered the worker gets the one-token markers' ids; left on, or with tool_choice none, it gets no rule", async () => {
    const off = await runWith(markerTokenizer(), request({ tools, toolChoice: "auto", singleToolCall: true }));
    expect(off.params.singleCall).toEqual({ openId: 1002, closeId: 1003 });
    expect(off.p.parser.singleCall).toBe(true);
    const on = await runWith(markerTokenizer(), request({ tools, toolChoice: "auto" }));
    expect(on.params.singleCall).toBeUndefined();
    expect(on.r.blocks.map((b) => b.kind)).toEqual(["tool_call", "tool_call"]);
    const none = await runWith(markerTokenizer(), request({ tools, toolChoice: "none", singleToolCall: true }));
    expect(none.params.singleCall).toBeUndefined();
  });

  test("a forced call opened in the prompt is the one call; after thinking, the rule starts at the block's close", async () => {
    const forced = await runWith(markerTokenizer(), request({ tools, toolChoice: { name: "f" }, singleToolCall: true }));
    expect(forced.params.singleCall).toEqual({ openId: 1002, closeId: 1003, opened: true });
    const thinks = await runWith(markerTokenizer(), request({ tools, toolChoice: "auto", singleToolCall: true, templateOptions: { enable_thinking: true } }));
    expect(thinks.params.singleCall).toEqual({ openId: 1002, closeId: 1003, startAfter: 1001 });
  });

  test("markers of several tokens: no worker rule; the parser keeps the first call and the finish is tool_calls", async () => {
    const off = await runWith(fakeTokenizer([]), request({ tools, toolChoice: "auto", singleToolCall: true }));
    expect(off.params.singleCall).toBeUndefined();
    expect(off.r.blocks).toEqual([{ kind: "tool_call", id: expect.any(String), name: "f", arguments: "{}" }]);
    expect(off.r.finish).toBe("tool_calls");
  });
});

describe("a raw prompt (the legacy completions format)", () => {
  const rawRun = async (req: CoreRequest, script: SeqEvent[] = [delta("<think>x</think> y"), finish("stop", 3)]) => {
    const rendered: string[] = [];
    const submitted: SeqRequest[] = [];
    const deps: CoreDeps = { scheduler: fakeScheduler(() => script, submitted), tokenizers: { get: async () => markerTokenizer() } };
    const p = await prepareGeneration(deps, model, req);
    const r = await collectChoice(submitGeneration(deps, p, new AbortController().signal)[0]!);
    return { p, r, rendered, submitted };
  };

  test("text skips the chat template and is tokenized as written, special tokens recognized", async () => {
    const { p, r } = await rawRun(request({ conversation: [], rawPrompt: "ab<think>" }));
    expect(p.promptIds).toEqual([97, 98, 1000]);
    // Nothing in the output is read as thinking or a call: the continuation is plain text.
    expect(p.parser).toEqual({ thinking: null, toolCall: null, startInThinking: false });
    expect(r.blocks).toEqual([{ kind: "text", text: "<think>x</think> y" }]);
  });

  test("token ids go to the scheduler as they are; the output budget fits the context", async () => {
    const { submitted } = await rawRun(request({ conversation: [], rawPrompt: [5, 6, 7], maxTokens: null }));
    expect(submitted[0]!.promptIds).toEqual([5, 6, 7]);
    expect(submitted[0]!.params.maxTokens).toBe(256 - 3);
  });

  test("an id outside the vocabulary, or an empty prompt, is a 400 naming prompt", async () => {
    for (const rawPrompt of [[1, 0x110000], ""]) {
      const err = await rawRun(request({ conversation: [], rawPrompt })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect([(err as ApiError).status, (err as ApiError).param]).toEqual([400, "prompt"]);
    }
    const long = await rawRun(request({ conversation: [], rawPrompt: new Array(300).fill(1), maxTokens: 8 })).catch((e: unknown) => e);
    expect((long as ApiError).status).toBe(400);
  });
});
