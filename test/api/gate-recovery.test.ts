// The gate where it meets background responses and refusals: a job acknowledged before a restart is admitted again
// without refusals and billed for the run that did the work only; refusals at the edge carry the rate-limit headers.
import { expect, test } from "bun:test";
import { dirname } from "node:path";
import { eq } from "drizzle-orm";
import { startKiln } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { credit, setBillingEnabled, setLapsed } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { ledger, responses, usage } from "../../src/db/schema.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer } from "../helpers/server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";

async function twoLives() {
  const dataDir = tempDir();
  const modelsDir = dirname(await tinyModelDir());
  const config = () => loadConfig({ KILN_DATA_DIR: dataDir, KILN_MODELS_DIR: modelsDir, KILN_PORT: "0", KILN_THREADS: "1" }, []);
  let printed = "";
  const first = await startKiln(config(), { logger: memoryLogger(), print: (t) => (printed += t), buildDefaultModel: false });
  const admin = printed.match(/LLM\|\d+\|[A-Za-z0-9]+/)![0];
  const model = first.deps.registry.list()[0]!.id;
  const post = async (key: string, body: unknown) => {
    const r = await fetch(`${first.url}/v1/responses`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as { id: string; status: string } };
  };
  // 16 long jobs fill the tiny model's batch, so what comes after them waits in the queue.
  const fill = async () => {
    for (let i = 0; i < 16; i++) await post(admin, { model, input: "Hello", temperature: 0, max_output_tokens: 3000, background: true });
  };
  const restart = () => startKiln(config(), { logger: memoryLogger(), print: () => {}, buildDefaultModel: false });
  return { first, model, post, fill, restart };
}

test("jobs acknowledged under a team's TPM are all run after a restart, not refused by a limiter that starts empty", async () => {
  const k = await twoLives();
  const team = createTeam(k.first.deps.db, "limited");
  updateTeam(k.first.deps.db, team.id, { tpmLimit: 4000 });
  const key = createKey(k.first.deps.db, team.id, "k").key;
  await k.fill();
  const a = await k.post(key, { model: k.model, input: "Say A", max_output_tokens: 2000, background: true });
  await Bun.sleep(1500);
  const b = await k.post(key, { model: k.model, input: "Say B", max_output_tokens: 2000, background: true });
  expect([a.status, b.status, a.body.status, b.body.status]).toEqual([200, 200, "queued", "queued"]);
  await k.first.stop(300);
  const second = await k.restart();
  try {
    for (const id of [a.body.id, b.body.id]) {
      const row = second.deps.db.select().from(responses).where(eq(responses.id, id)).get()!;
      expect(row.status).not.toBe("failed");
    }
  } finally {
    await second.stop(300);
  }
}, 120_000);

test("a queued job drained by a shutdown and run after the restart is charged once, for the run that did the work", async () => {
  const k = await twoLives();
  const team = createTeam(k.first.deps.db, "billed");
  setBillingEnabled(k.first.deps.db, team.id, true);
  credit(k.first.deps.db, team.id, 1_000_000, "start");
  const key = createKey(k.first.deps.db, team.id, "k").key;
  await k.fill();
  const job = await k.post(key, { model: k.model, input: "Say A", max_output_tokens: 16, background: true });
  expect(job.body.status).toBe("queued");
  await k.first.stop(300);
  const second = await k.restart();
  try {
    for (let i = 0; i < 500 && second.deps.db.select().from(responses).where(eq(responses.id, job.body.id)).get()!.status.match(/^(queued|in_progress)$/); i++) await Bun.sleep(20);
    const rows = second.deps.db.select().from(usage).where(eq(usage.teamId, team.id)).all();
    // The drained run never reached a worker: a row that bills nothing; the re-run bills its real tokens.
    expect(rows.map((r) => [r.inputTokens > 0, r.costMicros > 0])).toEqual([[false, false], [true, true]]);
    const charged = second.deps.db.select().from(ledger).where(eq(ledger.teamId, team.id)).all().filter((e) => e.kind === "charge");
    expect(charged.reduce((n, e) => n - e.amountMicros, 0)).toBe(rows[1]!.costMicros);
  } finally {
    await second.stop(300);
  }
}, 120_000);

test("a 403 or 402 at the edge carries the rate-limit headers like every keyed answer", async () => {
  const server = await startTestServer();
  try {
    const t = createTeam(server.deps.db, "limited");
    updateTeam(server.deps.db, t.id, { rpmLimit: 10, tpmLimit: 10_000, allowedEndpoints: ["chat"] });
    const h = { authorization: `Bearer ${createKey(server.deps.db, t.id, "k").key}`, "content-type": "application/json" };
    const r403 = await fetch(`${server.url}/v1/messages`, { method: "POST", headers: h, body: JSON.stringify({ model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: "hi" }] }) });
    expect(r403.status).toBe(403);
    expect(r403.headers.get("x-ratelimit-limit-requests")).toBe("10");
    expect(r403.headers.get("x-ratelimit-limit-tokens")).toBe("10000");
    setBillingEnabled(server.deps.db, t.id, true);
    credit(server.deps.db, t.id, 1000, null);
    setLapsed(server.deps.db, t.id, true);
    const r402 = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: h, body: JSON.stringify({ model: server.modelId, max_tokens: 4, messages: [{ role: "user", content: "hi" }] }) });
    expect(r402.status).toBe(402);
    expect(r402.headers.get("x-ratelimit-limit-requests")).toBe("10");
  } finally {
    await server.stop(500);
  }
}, 60_000);
