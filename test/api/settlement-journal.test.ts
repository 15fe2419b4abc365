// A usage write the database refuses does not give free inference: the answer goes out, the settlement is journaled
// and counted in /metrics, and the next start writes it into usage and the ledger, exactly once.
import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { dirname, join } from "node:path";
import { eq } from "drizzle-orm";
import { startKiln } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { credit, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { ledger, usage } from "../../src/db/schema.ts";
import { createTeam } from "../../src/db/teams-repo.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { tempDir } from "../helpers/kiln.ts";
import { parsePrometheusText, sampleValue } from "../helpers/prom-text.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";

test("a refused settlement is journaled and counted, and replayed into usage and ledger once at the next start", async () => {
  const dataDir = tempDir();
  const config = loadConfig({ KILN_DATA_DIR: dataDir, KILN_MODELS_DIR: dirname(await tinyModelDir()), KILN_PORT: "0", KILN_THREADS: "1" }, []);
  const life = () => startKiln(config, { logger: memoryLogger(), print: () => {}, buildDefaultModel: false });
  const metric = async (url: string, name: string) => sampleValue(parsePrometheusText(await (await fetch(`${url}/metrics`)).text()), name);

  const first = await life();
  const db = first.deps.db;
  const team = createTeam(db, "billed");
  setBillingEnabled(db, team.id, true);
  credit(db, team.id, 1_000_000, "start");
  const key = createKey(db, team.id, "k").key;
  // The database now refuses every usage row, as a full disk would.
  db.$client.run("CREATE TRIGGER full_disk BEFORE INSERT ON usage BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END");
  const res = await fetch(`${first.url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: first.deps.registry.list()[0]!.id, messages: [{ role: "user", content: "Hello" }], max_tokens: 5 }),
  });
  expect(res.status).toBe(200);
  const answer = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
  const requestId = res.headers.get("x-request-id")!;
  // The settlement is written after the answer: wait for it to be counted.
  await waitFor(() => metric(first.url, "kiln_settlements_journaled_total"), { what: "the refused settlement journaled", until: (n) => n >= 1, timeoutMs: 30_000, intervalMs: 20 });
  expect(await metric(first.url, "kiln_settlement_failures_total")).toBe(1);
  expect(db.select().from(usage).where(eq(usage.requestId, requestId)).all()).toEqual([]);
  await first.stop(300);

  // The disk has room again.
  const raw = new Database(join(dataDir, "kiln.db"));
  raw.run("DROP TRIGGER full_disk");
  raw.close();
  for (const [i, replayed] of [[0, 1], [1, 0]] as const) {
    const next = await life();
    try {
      expect([i, await metric(next.url, "kiln_settlements_replayed_total")]).toEqual([i, replayed]);
      const rows = next.deps.db.select().from(usage).where(eq(usage.requestId, requestId)).all();
      expect(rows.map((r) => [r.status, r.inputTokens, r.outputTokens])).toEqual([["completed", answer.usage.prompt_tokens, answer.usage.completion_tokens]]);
      const charges = next.deps.db.select().from(ledger).where(eq(ledger.requestId, requestId)).all();
      expect(charges.map((c) => c.amountMicros)).toEqual([-rows[0]!.costMicros]);
      expect(rows[0]!.costMicros).toBeGreaterThan(0);
    } finally {
      await next.stop(300);
    }
  }
}, 120_000);
