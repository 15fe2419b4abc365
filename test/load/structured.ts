// The bench's structured-output row: the same clients, prompt and sampling with every row held to a JSON Schema
// (kiln's constrained decoding) and without, in the same sitting against the same server, as output tokens/s.
import { medianBy, percentile, tpot } from "./metrics.ts";
import { streamChat } from "./stream-client.ts";

/**
 * Tool-argument-like fields (strings, enums, integers, booleans, a nested object), 24 of them required: no
 * instance fits in the bench's token cap, so constrained rows run exactly as long as unconstrained ones.
 */
const FIELD_TYPES = [
  { type: "string" },
  { enum: ["celsius", "fahrenheit"] },
  { type: "integer" },
  { type: "boolean" },
  { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"], additionalProperties: false },
];
const FIELDS = Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`field_${String(i).padStart(2, "0")}`, FIELD_TYPES[i % FIELD_TYPES.length]]));
const SCHEMA = { type: "object", properties: FIELDS, required: Object.keys(FIELDS), additionalProperties: false };

/** What kiln adds as a system message for a json_schema answer (prompt-format.ts's default instruction). */
const INSTRUCTION = `Respond with a single JSON object matching this JSON schema: ${JSON.stringify(SCHEMA)}, and nothing else.`;

export interface StructuredOptions {
  url: string;
  key: string;
  model: string;
  /** Each request's user message: a different one each (test/load/fresh-chat.ts), so no prompt cache flatters either side. */
  prompt: () => string;
  clients: number;
  maxTokens: number;
  rounds: number;
}

interface Round {
  tokPerSec: number;
  tokens: number;
  wallMs: number;
  tpotP50: number;
}

/** One round: every client at once; throughput is all output tokens over the round's wall time. */
async function round(o: StructuredOptions, constrained: boolean): Promise<Round> {
  const t0 = performance.now();
  const timings = await Promise.all(
    Array.from({ length: o.clients }, (_, i) =>
      streamChat(o.url, o.key, {
        model: o.model,
        // The unconstrained rows get kiln's JSON instruction as a system message too: the same prompt either way.
        messages: [...(constrained ? [] : [{ role: "system", content: INSTRUCTION }]), { role: "user", content: o.prompt() }],
        max_tokens: o.maxTokens,
        temperature: 0.8,
        seed: i + 1,
        ignore_eos: true,
        ...(constrained ? { response_format: { type: "json_schema", json_schema: { name: "fields", strict: true, schema: SCHEMA } } } : {}),
      }),
    ),
  );
  const wallMs = performance.now() - t0;
  const tokens = timings.reduce((n, t) => n + t.outputTokens, 0);
  const tpots = timings.map(tpot).filter((v): v is number => v !== null);
  return { tokPerSec: tokens / (wallMs / 1000), tokens, wallMs, tpotP50: percentile(tpots, 50) };
}

/** Runs both settings, alternating which goes first each round so drift on a busy machine hits both alike. */
export async function structuredRow(o: StructuredOptions): Promise<string> {
  // Warm-up: the worker builds its grammar compiler and compiles the schema on the first constrained request.
  await streamChat(o.url, o.key, { model: o.model, messages: [{ role: "user", content: o.prompt() }], max_tokens: 4, response_format: { type: "json_schema", json_schema: { name: "fields", strict: true, schema: SCHEMA } } });
  const plain: Round[] = [];
  const constrained: Round[] = [];
  for (let r = 0; r < o.rounds; r++) {
    if (r % 2 === 0) {
      plain.push(await round(o, false));
      constrained.push(await round(o, true));
    } else {
      constrained.push(await round(o, true));
      plain.push(await round(o, false));
    }
  }
  const p = medianBy(plain, (x) => x.tokPerSec);
  const c = medianBy(constrained, (x) => x.tokPerSec);
  const row = (name: string, x: Round) => `| ${name} | ${x.tokPerSec.toFixed(1)} | ${x.tpotP50.toFixed(1)} | ${x.tokens} | ${x.wallMs.toFixed(0)} |`;
  return [
    `structured output at ${o.clients} clients (same server, same sitting, median of ${o.rounds} rounds):`,
    `| rows | output tok/s | TPOT p50 ms | output tokens | wall ms |`,
    `| --- | ---: | ---: | ---: | ---: |`,
    row("unconstrained", p),
    row("every row json_schema (strict)", c),
    `constrained / unconstrained throughput: ${(c.tokPerSec / p.tokPerSec).toFixed(2)}× (target ≥ 0.9×); TPOT ${(c.tpotP50 / p.tpotP50).toFixed(2)}×`,
  ].join("\n");
}
