// The samplers through the real server on the tiny model: each one's effect on what greedy decoding (or sampling)
// picks, shown with a logit bias that makes two known tokens lead by a known margin, so the expected text follows
// from the definitions, not from the random weights.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";

let s: TestServer;
let vocab: Record<string, number>;
beforeAll(async () => {
  s = await startTestServer();
  vocab = JSON.parse(readFileSync(join(await tinyModelDir(), "tokenizer.json"), "utf8")).model.vocab;
});
afterAll(() => s.stop(1000));

async function chat(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: s.modelId, messages: [{ role: "user", content: "Say something." }], max_tokens: 6, temperature: 0, ignore_eos: true, ...body }),
  });
  return { status: res.status, body: await res.json() };
}
const text = async (body: Record<string, unknown>) => {
  const r = await chat(body);
  expect(r.status).toBe(200);
  return r.body.choices[0].message.content as string;
};

/** How often the output's most frequent word appears: greedy decoding on random weights falls into a loop of one word. */
const loopCount = (out: string) => {
  const counts = new Map<string, number>();
  for (const w of out.split(/\s+/).filter(Boolean)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return Math.max(0, ...counts.values());
};
const leadingRun = (out: string, ch: string) => out.length - out.replace(new RegExp(`^${ch}+`), "").length;

describe("samplers on chat completions", () => {
  const LONG = { max_tokens: 80 };
  // A +100 bias puts "q" ~100 logits ahead of every other token (the tiny model's own logits differ by a few units).
  const q = () => ({ [vocab.q!]: 100 });

  test("logit_bias: +100 makes greedy write its token every step", async () => {
    expect(await text({ ...LONG, logit_bias: q() })).toBe("q".repeat(80));
  });

  test("presence_penalty subtracts once, frequency_penalty once per occurrence: only the latter overtakes a 100 lead", async () => {
    expect(await text({ ...LONG, logit_bias: q(), presence_penalty: 2 })).toBe("q".repeat(80));
    // After k q's its lead is 100 − 2k plus the model's own gap: another token wins at k ≈ 50.
    const out = await text({ ...LONG, logit_bias: q(), frequency_penalty: 2 });
    const run = leadingRun(out, "q");
    expect(run).toBeGreaterThanOrEqual(40);
    expect(run).toBeLessThanOrEqual(60);
    expect(out.length).toBeGreaterThan(run);
  });

  test("each penalty breaks greedy decoding's loop of one word", async () => {
    const loop = loopCount(await text(LONG));
    expect(loop).toBeGreaterThanOrEqual(20);
    for (const penalty of [{ presence_penalty: 2 }, { frequency_penalty: 2 }, { repetition_penalty: 1.5 }]) {
      const n = loopCount(await text({ ...LONG, ...penalty }));
      expect([penalty, n < loop / 2]).toEqual([penalty, true]);
    }
  });

  test("min_p 1 and top_k 1 leave only the top token: sampling at temperature 1 matches greedy for every seed", async () => {
    const greedy = await text({});
    for (const seed of [1, 2, 3]) {
      expect(await text({ temperature: 1, seed, min_p: 1 })).toBe(greedy);
      expect(await text({ temperature: 1, seed, top_k: 1 })).toBe(greedy);
    }
    const sampled = new Set<string>();
    for (const seed of [1, 2, 3, 4, 5]) sampled.add(await text({ temperature: 1, seed, max_tokens: 12 }));
    expect(sampled.size).toBeGreaterThan(1);
  });

  test("rows batched together each keep their own samplers", async () => {
    const bodies = [{ logit_bias: q() }, { logit_bias: { [vocab.z!]: 100 } }, {}, { repetition_penalty: 1.5 }, { logit_bias: q(), frequency_penalty: 2 }].map((b) => ({ ...LONG, ...b }));
    const alone: string[] = [];
    for (const b of bodies) alone.push(await text(b));
    expect(await Promise.all(bodies.map((b) => text(b)))).toEqual(alone);
  });

  test("a logit_bias id the tokenizer does not have is a 400 naming it", async () => {
    const r = await chat({ logit_bias: { "7": 1, "99999999": 5 } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ type: "invalid_request_error", param: "logit_bias" });
    expect(r.body.error.message).toContain("99999999");
    expect(r.body.error.message).not.toContain(": 7");
  });

  test("out-of-range values are 400s naming the field", async () => {
    for (const [field, value] of [["presence_penalty", 3], ["min_p", 1.5], ["repetition_penalty", 0], ["logit_bias", { "5": 101 }]] as const) {
      const r = await chat({ [field]: value });
      expect([field, r.status, r.body.error?.param]).toEqual([field, 400, field]);
    }
  });
});
