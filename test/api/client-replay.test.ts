// Replays every request real clients sent (../shared/clients, beside the repository: Codex CLI, Claude Code, the AI
// SDK, the Agents SDK, the OpenAI and Anthropic Python SDKs) against a real kiln with the built-in text models, and
// checks each answer: a 2xx in the client's own format, or the documented error for the requests meant to fail.
// Sealed items (reasoning encrypted_content, thinking signatures) are re-minted on this server to test the 2xx path.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { builtinTextModels } from "../helpers/builtin-models.ts";
import * as fmt from "../helpers/client-formats.ts";
import { readFrames, type SseFrame } from "../helpers/sse-frames.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

type Json = Record<string, any>;
interface Fixture { name: string; method: string; path: string; headers: Record<string, string>; body: Json; expected: string }

const CORPUS = join(import.meta.dir, "..", "..", "..", "shared", "clients");
const present = existsSync(CORPUS);
if (!present) console.log(`client replay skipped: ${CORPUS} does not exist (the corpus of real client requests lives beside the repository)`);
const fixtures: Fixture[] = present
  ? readdirSync(CORPUS).filter((f) => f.endsWith(".json")).sort().map((f) => ({ name: f.slice(0, -5), ...JSON.parse(readFileSync(join(CORPUS, f), "utf8")) }))
  : [];

let server: TestServer;
// Prompts of 10,000–33,000 tokens run through a CPU prefill: minutes on a busy machine.
const LONG = 300_000;

/** Sends a fixture's request (or `body` in its place) with this server's key, as the client authenticates. */
function send(fx: Fixture, body: Json = fx.body): Promise<Response> {
  const messages = fx.path.startsWith("/v1/messages");
  const auth: Record<string, string> = messages ? { "x-api-key": server.key } : { authorization: `Bearer ${server.key}` };
  return fetch(`${server.url}${fx.path}`, { method: fx.method, headers: { ...fx.headers, ...auth }, body: JSON.stringify(body) });
}

const formatOf = (fx: Fixture) => (fx.path.startsWith("/v1/messages") ? "messages" : fx.path.startsWith("/v1/responses") ? "responses" : "chat");

/** The 2xx answer in the fixture's format: the JSON body, or the frames read (a stream is left once output flows). */
async function expectOk(fx: Fixture, res: Response, body: Json = fx.body): Promise<{ json?: Json; frames?: SseFrame[] }> {
  if (res.status !== 200) throw new Error(`${fx.name}: ${res.status} ${await res.text()}`);
  const kind = formatOf(fx);
  if (!body.stream) {
    const json = (await res.json()) as Json;
    if (fx.path.endsWith("/count_tokens")) expect(json.input_tokens).toBeGreaterThan(0);
    else if (kind === "responses") fmt.expectResponseObject(json);
    else if (kind === "chat") fmt.expectChatCompletion(json);
    else fmt.expectMessage(json);
    return { json };
  }
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  if (kind === "responses") {
    const frames = await readFrames(res, fmt.responsesStop);
    fmt.expectResponsesStream(frames);
    return { frames };
  }
  if (kind === "messages") {
    const frames = await readFrames(res, fmt.messagesStop);
    fmt.expectMessagesStream(frames);
    return { frames };
  }
  const frames = await readFrames(res);
  fmt.expectChatStream(frames, !!body.stream_options?.include_usage);
  return { frames };
}

async function expectRefused(fx: Fixture, res: Response, param: string | null): Promise<string> {
  return fmt.expectError(formatOf(fx) === "messages" ? "messages" : "openai", 400, (await res.json()) as Json, res.status, param);
}

/** The value parses to the fixture's JSON schema (as the client's zod does: no Infinity, no missing field). */
function expectSchema(schema: Json, value: unknown): void {
  const parsed = z.fromJSONSchema(schema as never).safeParse(value);
  expect(parsed.error?.issues ?? []).toEqual([]);
}

const fixture = (name: string) => fixtures.find((f) => f.name === name)!;
/** Requests sent with no output cap get one here (a random-weight model may otherwise write to the context's end). */
const capped = (fx: Fixture): Json => (formatOf(fx) === "responses" && !fx.body.stream && fx.body.max_output_tokens == null ? { ...fx.body, max_output_tokens: 256 } : fx.body);

/** Checks beyond the format, for the fixtures whose `expected` asks for more. */
const EXTRA: Record<string, (r: { json?: Json; frames?: SseFrame[] }, fx: Fixture) => void> = {
  "aisdk-chat-structured-output": ({ json }, fx) => {
    expect(json!.choices[0].finish_reason).toBe("stop");
    expectSchema(fx.body.response_format.json_schema.schema, JSON.parse(json!.choices[0].message.content));
  },
  "aisdk-chat-forced-tool-stream": ({ frames }, fx) => {
    const deltas = frames!.slice(0, -1).flatMap((f) => f.data.choices?.[0]?.delta?.tool_calls ?? []);
    expect(frames!.some((f) => f.data.choices?.[0]?.finish_reason === "tool_calls")).toBe(true);
    expectSchema(fx.body.tools[0].function.parameters, JSON.parse(deltas.map((d: Json) => d.function?.arguments ?? "").join("")));
  },
  "aisdk-anthropic-forced-tool": ({ json }, fx) => {
    expect(json!.stop_reason).toBe("tool_use");
    const uses = json!.content.filter((b: Json) => b.type === "tool_use");
    expect(uses.map((b: Json) => b.name)).toEqual(["json"]);
    expectSchema(fx.body.tools[0].input_schema, uses[0].input);
  },
  "aisdk-anthropic-tool-result-replay": ({ json }) => expect(json!.content.filter((b: Json) => b.type === "tool_use")).toEqual([]),
  "aisdk-responses-tool-loop": ({ json }) => {
    expect(json!.output.some((it: Json) => it.type === "message")).toBe(true);
    expect(json!.output.some((it: Json) => it.type === "function_call")).toBe(false);
  },
  "openai-python-responses-parse": ({ json }, fx) => {
    const text = json!.output.filter((it: Json) => it.type === "message").flatMap((it: Json) => it.content.map((p: Json) => p.text)).join("");
    expectSchema(fx.body.text.format.schema, JSON.parse(text));
  },
};

/** The requests meant to fail as sent, with the param of their documented error. */
const REFUSED: Record<string, { param: string | null; message?: RegExp }> = {
  "aisdk-responses-replayed-history": { param: "input.1.phase", message: /input\.1 .*phase: "commentary"/ },
  // Sealed by the capturing server: a reasoning item is named (rule 2 on the trailing one, or its seal).
  "codex-resume-reasoning-content-null": { param: "input", message: /rs_[0-9a-f]+ \(input\.\d\) of type 'reasoning'/ },
  "codex-resume-trailing-reasoning": { param: "input", message: /rs_[0-9a-f]+ \(input\.\d\) of type 'reasoning'/ },
  "anthropic-python-thinking-signed-replay": { param: "messages.1.content.0.signature" },
};

/** Turn 1 of a Codex conversation re-run here (input items 0-3), its output replayed as Codex does, then `rest`. */
async function codexResume(fx: Fixture, rest: Json[]): Promise<void> {
  const first = { ...fx.body, input: fx.body.input.slice(0, 4), max_output_tokens: 48 };
  const frames = await readFrames(await send(fx, first), (f) => /^response\.(completed|incomplete|failed)$/.test(f.data?.type));
  const done = frames[frames.length - 1]!.data;
  expect(["response.completed", "response.incomplete"]).toContain(done.type);
  const replay = done.response.output.map((it: Json) => (it.type === "reasoning" ? { ...it, content: null } : it));
  const second = { ...fx.body, input: [...first.input, ...replay, ...rest] };
  await expectOk(fx, await send(fx, second), second);
}

describe.skipIf(!present)("client replay (../shared/clients)", () => {
  beforeAll(async () => {
    server = await startTestServer({}, { modelDir: await builtinTextModels() });
  }, LONG);
  afterAll(() => server?.stop(1000));

  for (const fx of fixtures) {
    const refused = REFUSED[fx.name];
    test(`${fx.name}: ${refused ? `the documented 400 (param ${refused.param})` : "2xx in the client's format"}`, async () => {
      const res = await send(fx, refused ? fx.body : capped(fx));
      if (refused) {
        const message = await expectRefused(fx, res, refused.param);
        if (refused.message) expect(message).toMatch(refused.message);
        return;
      }
      // Claude Code's first request carries a mid-conversation system message: 200, or the 400 it recovers from.
      if (fx.name === "claude-code-first-request" && res.status === 400) return void (await expectRefused(fx, res, "messages.1.role"));
      if (fx.name === "claude-code-mid-conversation-system" && res.status === 400) return void (await expectRefused(fx, res, "messages.1.role"));
      const answer = await expectOk(fx, res, capped(fx));
      EXTRA[fx.name]?.(answer, fx);
    }, LONG);
  }

  test("codex-resume-reasoning-content-null, re-minted here: kiln's own [reasoning, message, …] with content null replays (200)", async () => {
    const fx = fixture("codex-resume-reasoning-content-null");
    await codexResume(fx, fx.body.input.slice(7));
  }, LONG);

  test("codex-resume-trailing-reasoning, re-minted here: the conversation's later turns replay kiln's own output (200)", async () => {
    const fx = fixture("codex-resume-trailing-reasoning");
    await codexResume(fx, fx.body.input.slice(7));
  }, LONG);

  test("anthropic-python-thinking-signed-replay, re-minted here: this server's signed thinking block replays (200)", async () => {
    const fx = fixture("anthropic-python-thinking-signed-replay");
    const first = await send(fx, { ...fx.body, messages: fx.body.messages.slice(0, 1) });
    expect(first.status).toBe(200);
    const thinking = ((await first.json()) as Json).content.filter((b: Json) => b.type === "thinking");
    expect(thinking.length).toBeGreaterThan(0);
    const body = { ...fx.body, messages: [fx.body.messages[0], { role: "assistant", content: thinking }, ...fx.body.messages.slice(2)] };
    await expectOk(fx, await send(fx, body), body);
  }, LONG);
});
