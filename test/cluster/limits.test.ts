// Tokens per minute and billing holds across three replicas behind haproxy (build/cluster/launch.ts): a burst of
// concurrent requests through haproxy admits exactly what the team's TPM, or its balance, covers, whichever replica
// each request reaches (Redis keeps both); and while Postgres refuses the usage writes, the charges each replica
// journals count on the others, so the cluster admits what the balance covers, not each replica.
import { describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { costMicros } from "../../src/billing/cost.ts";
import { credit, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { updateTeam } from "../../src/db/teams-repo.ts";
import { readModelFolder } from "../../src/models/registry.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { clusterPerFile } from "./cluster-per-file.ts";

const MAX_TOKENS = 8;
const BURST = 20;
const cl = clusterPerFile(3);

/** One chat request through haproxy: always MAX_TOKENS tokens, so what it uses is what it reserved. */
const chat = (key: string) =>
  fetch(`${cl.cluster.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "kiln-tiny-v1", messages: [{ role: "user", content: "Hello there" }], max_tokens: MAX_TOKENS, temperature: 0, ignore_eos: true }),
  });

/** The prompt's token count, from one request of a team without limits. */
async function promptTokens(): Promise<number> {
  const t = await cl.team(`probe-${crypto.randomUUID()}`);
  const res = await chat(t.key);
  expect(res.status).toBe(200);
  return ((await res.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
}

describe("three replicas behind haproxy, one Redis", () => {
  test(`a team whose TPM covers 5 requests, sending ${BURST} at once through haproxy, gets exactly 5`, async () => {
    const perRequest = (await promptTokens()) + MAX_TOKENS;
    const t = await cl.team("tpm");
    // A minute's bucket of five requests refills one request's tokens in 12 s: far longer than the burst's admissions.
    await updateTeam(cl.db, t.id, { tpmLimit: 5 * perRequest });
    const statuses = await Promise.all(Array.from({ length: BURST }, () => chat(t.key).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(BURST - 5);
  }, 120_000);

  test(`a billed team whose balance covers 5 requests' worst case, sending ${BURST} at once through haproxy, gets exactly 5`, async () => {
    const prompt = await promptTokens();
    // The tiny model's prices, from its kiln.json as the replicas read them.
    const pricing = readModelFolder(await tinyModelDir(), "kiln-tiny-v1").pricing;
    const worst = costMicros(pricing, { inputTokens: prompt, outputTokens: MAX_TOKENS, cachedTokens: 0, images: 0 });
    expect(worst).toBeGreaterThan(0);
    const t = await cl.team("billed");
    await setBillingEnabled(cl.db, t.id, true);
    // Five holds fit; a sixth would need one micro-unit less than a whole one more.
    await credit(cl.db, t.id, 6 * worst - 1, "cluster test");
    const statuses = await Promise.all(Array.from({ length: BURST }, () => chat(t.key).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(BURST - 5);
  }, 120_000);

  test("while Postgres refuses usage writes (and serves reads), a billed team whose balance covers 2 requests gets 2 through haproxy, not 2 per replica", async () => {
    const worst = await worstCase();
    const t = await cl.team("journaled");
    await setBillingEnabled(cl.db, t.id, true);
    await credit(cl.db, t.id, 3 * worst - 1, "cluster test");
    if (cl.db.dialect !== "postgres") throw new Error("the cluster runs on Postgres");
    const pg = cl.db.pg;
    await pg.execute(sql.raw(`CREATE FUNCTION refuse_usage() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'; END $$ LANGUAGE plpgsql`));
    await pg.execute(sql.raw("CREATE TRIGGER refuse_usage BEFORE INSERT ON usage FOR EACH ROW EXECUTE FUNCTION refuse_usage()"));
    try {
      // One after another, so haproxy spreads them over the replicas and each settles (journaled) before the next.
      const statuses: number[] = [];
      for (let i = 0; i < 9; i++) statuses.push(await chat(t.key).then((r) => r.status));
      expect(statuses).toEqual([200, 200, 402, 402, 402, 402, 402, 402, 402]);
    } finally {
      await pg.execute(sql.raw("DROP TRIGGER refuse_usage ON usage"));
    }
  }, 120_000);
});

/** One request's worst-case price (what it costs, with ignore_eos and MAX_TOKENS), from the tiny model's prices. */
async function worstCase(): Promise<number> {
  const pricing = readModelFolder(await tinyModelDir(), "kiln-tiny-v1").pricing;
  return costMicros(pricing, { inputTokens: await promptTokens(), outputTokens: MAX_TOKENS, cachedTokens: 0, images: 0 });
}
