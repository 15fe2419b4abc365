// The prefix cache through the official clients against a real kiln: a fresh prompt reports nothing cached; the same
// long request again reports its cached prompt tokens in each format's own field, is charged at the model's
// cached_input_per_million in the usage row and the ledger, and moves /metrics' prefix-cache counters.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { eq } from "drizzle-orm";
import OpenAI from "openai";
import { credit, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { ledger, usage } from "../../src/db/schema.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { tempDir } from "../helpers/kiln.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { sqliteOf } from "../helpers/databases.ts";

/** Micro-units per token (the kiln.json prices per million tokens): a cache read costs a third of a fresh input token. */
const PRICE = { input: 3, cached: 1, output: 8 };
/** Long enough that a repeat has several whole blocks to read (≥ 64 prompt tokens, checked below). */
const LONG =
  "Describe, in plain words and without lists, how a river carries sand from the mountains to the sea, " +
  "what happens to that sand when the current slows near the coast, and why deltas grow over many years " +
  "while some beaches slowly disappear when dams upstream hold the sediment back.";

let server: TestServer;
let openai: OpenAI;
let anthropic: Anthropic;
let teamId: number;
/** A second team's client: it must never read the first team's cached prefixes, except declared public ones. */
let other: OpenAI;

/** The model's declared public system prompt (kiln.json public_prefixes), long enough to fill several blocks. */
const PUBLIC_SYSTEM =
  "You are the public help desk of a river museum. Answer visitors' questions about rivers, sediment, deltas, dams " +
  "and coastlines in short, friendly sentences, and say so when a question is outside what the museum covers.";

beforeAll(async () => {
  // The tiny model under a kiln.json of its own, with a cached-input price apart from the input price.
  const dir = join(tempDir(), basename(await tinyModelDir()));
  cpSync(await tinyModelDir(), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, "kiln.json"), "utf8"));
  manifest.pricing = { input_per_million: PRICE.input, cached_input_per_million: PRICE.cached, output_per_million: PRICE.output, per_image: null };
  manifest.public_prefixes = [PUBLIC_SYSTEM];
  writeFileSync(join(dir, "kiln.json"), JSON.stringify(manifest));
  server = await startTestServer({ KILN_PREFIX_CACHE: "1" }, { modelDir: dir });
  const db = server.deps.db;
  const team = await createTeam(db, "cache-buyers");
  teamId = team.id;
  await setBillingEnabled(db, team.id, true);
  await credit(db, team.id, 1_000_000_000, "plenty");
  const key = (await createKey(db, team.id, "cache")).key;
  openai = new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  const otherTeam = await createTeam(db, "other-team");
  other = new OpenAI({ apiKey: (await createKey(db, otherTeam.id, "other")).key, baseURL: `${server.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: key, baseURL: server.url, maxRetries: 0 });
});
afterAll(() => server.stop(1000));

/** A prompt nothing can have cached: a fresh nonce opens the first message, inside the first block. */
const fresh = () => `${crypto.randomUUID()} ${LONG}`;

/** What a request reported, in one shape: the whole prompt, its cached part, and the output. */
interface Reported {
  prompt: number;
  cached: number;
  output: number;
}

function expectMiss(r: Reported): void {
  expect(r.prompt).toBeGreaterThanOrEqual(64);
  expect(r.cached).toBe(0);
}

/**
 * The cache works in blocks of 16 tokens and the end of a prompt is always computed: a repeat of a ≥ 64-token prompt
 * reads at least three blocks from it, never the whole prompt.
 */
function expectHit(r: Reported, first: Reported): void {
  expect(r.prompt).toBe(first.prompt);
  expect(r.cached).toBeGreaterThanOrEqual(48);
  expect(r.cached).toBeLessThan(r.prompt);
}

/** The request's usage row and ledger charge, once settled: both at the prices above, from the reported counts. */
async function expectCharged(response: Response, r: Reported): Promise<void> {
  const requestId = response.headers.get("x-request-id")!;
  const db = server.deps.db;
  const row = (await waitFor(() => sqliteOf(db).select().from(usage).where(eq(usage.requestId, requestId)).get(), { what: `the usage row of ${requestId}` }))!;
  const expected = (r.prompt - r.cached) * PRICE.input + r.cached * PRICE.cached + r.output * PRICE.output;
  expect([row.teamId, row.inputTokens, row.cachedTokens, row.outputTokens, row.costMicros]).toEqual([teamId, r.prompt, r.cached, r.output, expected]);
  const charges = sqliteOf(db).select().from(ledger).where(eq(ledger.requestId, requestId)).all();
  expect(charges.map((c) => c.amountMicros)).toEqual([-expected]);
  // The cached rate was applied: at the input rate alone the same request costs more.
  if (r.cached) expect(expected).toBeLessThan(r.prompt * PRICE.input + r.output * PRICE.output);
}

describe("chat completions", () => {
  const ask = (content: string) => ({ model: server.modelId, max_tokens: 4, temperature: 0, messages: [{ role: "user" as const, content }] });
  const reported = (u: OpenAI.CompletionUsage | undefined): Reported => ({ prompt: u!.prompt_tokens, cached: u!.prompt_tokens_details!.cached_tokens!, output: u!.completion_tokens });

  test("a fresh prompt reports prompt_tokens_details.cached_tokens 0; the same request again reports its cached blocks and is charged for them at the cached rate", async () => {
    const content = fresh();
    const { data: first, response: firstRes } = await openai.chat.completions.create(ask(content)).withResponse();
    expect(first.usage!.prompt_tokens_details).toEqual({ cached_tokens: 0 });
    expectMiss(reported(first.usage));
    await expectCharged(firstRes, reported(first.usage));
    const { data: again, response } = await openai.chat.completions.create(ask(content)).withResponse();
    expectHit(reported(again.usage), reported(first.usage));
    await expectCharged(response, reported(again.usage));
  });

  test("the include_usage chunk carries cached_tokens too: 0 on a miss, the cached blocks on a repeat", async () => {
    const streamed = async (content: string) => {
      const { data: stream, response } = await openai.chat.completions.create({ ...ask(content), stream: true, stream_options: { include_usage: true } }).withResponse();
      let u: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) u = chunk.usage ?? u;
      return { r: reported(u), response };
    };
    const content = fresh();
    const first = await streamed(content);
    expectMiss(first.r);
    const again = await streamed(content);
    expectHit(again.r, first.r);
    await expectCharged(again.response, again.r);
  });
});

describe("responses", () => {
  const ask = (input: string) => ({ model: server.modelId, input, max_output_tokens: 16, temperature: 0 });
  const reported = (u: OpenAI.Responses.ResponseUsage | null | undefined): Reported => ({ prompt: u!.input_tokens, cached: u!.input_tokens_details.cached_tokens, output: u!.output_tokens });

  test("input_tokens_details.cached_tokens: 0 fresh; on a repeat, streamed (the terminal event), stored (GET) and background alike", async () => {
    const input = fresh();
    const { data: first, response: firstRes } = await openai.responses.create(ask(input)).withResponse();
    expectMiss(reported(first.usage));
    await expectCharged(firstRes, reported(first.usage));
    const { data: events, response } = await openai.responses.create({ ...ask(input), stream: true }).withResponse();
    let streamed: OpenAI.Responses.Response | undefined;
    // response.completed, or response.incomplete when max_output_tokens cut the answer: both carry the usage.
    for await (const ev of events) if (ev.type === "response.completed" || ev.type === "response.incomplete") streamed = ev.response;
    if (!streamed) throw new Error("the stream had no terminal response event");
    expectHit(reported(streamed.usage), reported(first.usage));
    await expectCharged(response, reported(streamed.usage));
    expect((await openai.responses.retrieve(streamed.id)).usage).toEqual(streamed.usage);
    const queued = await openai.responses.create({ ...ask(input), background: true });
    const done = await waitFor(() => openai.responses.retrieve(queued.id), { what: "the background response completed", until: (r) => r.status === "completed" || r.status === "incomplete", timeoutMs: 60_000, intervalMs: 50 });
    expectHit(reported(done.usage), reported(first.usage));
  });
});

describe("messages", () => {
  const ask = (content: string) => ({ model: server.modelId, max_tokens: 4, temperature: 0, messages: [{ role: "user" as const, content }] }) as Anthropic.MessageCreateParamsNonStreaming;
  /** Anthropic's input_tokens leave out the cache reads: the whole prompt is their sum. */
  const reported = (u: Anthropic.Usage): Reported => ({ prompt: u.input_tokens + u.cache_read_input_tokens!, cached: u.cache_read_input_tokens!, output: u.output_tokens });

  test("non-streaming: cache_read_input_tokens 0 fresh, the cached blocks on a repeat, input_tokens the rest; cache_creation_input_tokens always 0", async () => {
    const content = fresh();
    const { data: first, response: firstRes } = await anthropic.messages.create(ask(content)).withResponse();
    expect([first.usage.cache_read_input_tokens, first.usage.cache_creation_input_tokens]).toEqual([0, 0]);
    expectMiss(reported(first.usage));
    await expectCharged(firstRes, reported(first.usage));
    const { data: again, response } = await anthropic.messages.create(ask(content)).withResponse();
    expect(again.usage.cache_creation_input_tokens).toBe(0);
    expectHit(reported(again.usage), reported(first.usage));
    expect(again.usage.input_tokens).toBe(first.usage.input_tokens - again.usage.cache_read_input_tokens!);
    await expectCharged(response, reported(again.usage));
  });

  test("streaming: finalMessage takes the split from message_delta; count_tokens still counts the whole prompt", async () => {
    const streamed = async (content: string) => {
      const stream = anthropic.messages.stream(ask(content));
      const { response } = await stream.withResponse();
      return { m: await stream.finalMessage(), response };
    };
    const content = fresh();
    const first = await streamed(content);
    expect([first.m.usage.cache_read_input_tokens, first.m.usage.cache_creation_input_tokens]).toEqual([0, 0]);
    expectMiss(reported(first.m.usage));
    const again = await streamed(content);
    expect(again.m.usage.cache_creation_input_tokens).toBe(0);
    expectHit(reported(again.m.usage), reported(first.m.usage));
    await expectCharged(again.response, reported(again.m.usage));
    expect((await anthropic.messages.countTokens({ model: server.modelId, messages: ask(content).messages })).input_tokens).toBe(reported(again.m.usage).prompt);
  });
});

test("/metrics: after the repeats above, the hit-token counter and the hit ratio are above 0, and the prompt counter covers the hits", async () => {
  const f = parsePrometheusText(await (await fetch(`${server.url}/metrics`)).text());
  const model = { model: server.modelId };
  const hits = sampleValue(f, "kiln_prefix_cache_hit_tokens_total", model);
  expect(hits).toBeGreaterThan(0);
  expect(sampleValue(f, "kiln_prefix_cache_prompt_tokens_total", model)).toBeGreaterThan(hits);
  expect(sampleValue(f, "kiln_prefix_cache_hit_ratio", model)).toBeGreaterThan(0);
  expect(sampleValue(f, "kiln_prefix_cache_blocks", model)).toBeGreaterThan(0);
});

describe("isolation between teams", () => {
  const ask = (messages: OpenAI.ChatCompletionMessageParam[]) => ({ model: server.modelId, max_tokens: 2, temperature: 0, messages });
  const cached = (r: OpenAI.ChatCompletion) => r.usage!.prompt_tokens_details!.cached_tokens!;

  test("another team's identical prompt finds nothing cached, though the first team's repeat does", async () => {
    const messages = [{ role: "user" as const, content: fresh() }];
    expect(cached(await openai.chat.completions.create(ask(messages)))).toBe(0);
    expect(cached(await other.chat.completions.create(ask(messages)))).toBe(0);
    expect(cached(await openai.chat.completions.create(ask(messages)))).toBeGreaterThanOrEqual(48);
  });

  test("a declared public system prompt is shared across teams, and only its whole blocks", async () => {
    const withPublic = (question: string) => [{ role: "system" as const, content: PUBLIC_SYSTEM }, { role: "user" as const, content: question }];
    const mine = await openai.chat.completions.create(ask(withPublic(fresh())));
    const theirs = await other.chat.completions.create(ask(withPublic(fresh())));
    // The system prompt's rendered tokens fill whole blocks; the other team reads those, and nothing of the question.
    expect(cached(theirs)).toBeGreaterThanOrEqual(32);
    expect(cached(theirs) % 16).toBe(0);
    expect(cached(theirs)).toBeLessThan(theirs.usage!.prompt_tokens - 20);
    expect(mine.usage!.prompt_tokens).toBeGreaterThan(cached(theirs));
  });
});
