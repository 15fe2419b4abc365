// Embeddings admitted like every other request, against a real kiln serving a priced copy of kiln-embed-tiny-v1: TPM
// counts the input tokens (a request past what is left is a 429), billing charges the input price only and refuses
// with 402 before any work when the balance cannot cover it, and the usage row and the ledger agree.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { credit, setBillingEnabled } from "../../src/db/billing-repo.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { usage } from "../../src/db/schema.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { sqliteOf } from "../helpers/databases.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { tinyEmbedModelDir } from "../helpers/tiny-model.ts";
import { waitFor } from "../helpers/wait-for.ts";

const MODEL = "kiln-embed-tiny-v1";
/** Currency units per million tokens: 2 micro-units a token in, and an output price that must never be charged. */
const PRICING = { input_per_million: 2, output_per_million: 1000 };

let server: TestServer;
beforeAll(async () => {
  const dir = join(tempDir("kiln-embed-priced-"), MODEL);
  cpSync(await tinyEmbedModelDir(), dir, { recursive: true });
  const manifest = JSON.parse(readFileSync(join(dir, "kiln.json"), "utf8"));
  writeFileSync(join(dir, "kiln.json"), JSON.stringify({ ...manifest, pricing: PRICING }));
  server = await startTestServer({}, { modelDir: dir });
});
afterAll(() => server.stop(1000));

async function team(name: string) {
  const t = await createTeam(server.deps.db, name);
  return { id: t.id, key: (await createKey(server.deps.db, t.id, "k")).key };
}

const embed = (key: string, input: string | string[]) =>
  fetch(`${server.url}/v1/embeddings`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, input }) });

const TEXT = "The river carried sand to the sea, and the sea carried it further still. ".repeat(3);

describe("embeddings admission", () => {
  test("TPM counts the input tokens: a request past what is left is a 429 naming tokens per minute", async () => {
    const probe = ((await (await embed(server.key, TEXT)).json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
    const t = await team("embed-tokens");
    await updateTeam(server.deps.db, t.id, { tpmLimit: probe + probe / 2 });
    const first = await embed(t.key, TEXT);
    expect(first.status).toBe(200);
    expect(Number(first.headers.get("x-ratelimit-remaining-tokens"))).toBeLessThanOrEqual(probe / 2 + 5);
    const second = await embed(t.key, TEXT);
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { message: string } }).error.message).toContain("tokens per minute (TPM)");
  }, 60_000);

  test("billing charges the input price only; a balance that cannot cover the input is a 402 before any work", async () => {
    const t = await team("embed-billing");
    await setBillingEnabled(server.deps.db, t.id, true);
    await credit(server.deps.db, t.id, 1_000_000, null);
    const res = await embed(t.key, [TEXT, "Hello"]);
    expect(res.status).toBe(200);
    const tokens = ((await res.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens;
    const row = (await waitFor(() => sqliteOf(server.deps.db).select().from(usage).where(eq(usage.teamId, t.id)).get(), { what: "the usage row" }))!;
    expect([row.endpoint, row.status, row.inputTokens, row.outputTokens, row.costMicros]).toEqual(["embeddings", "completed", tokens, 0, tokens * 2]);

    const poor = await team("embed-poor");
    await setBillingEnabled(server.deps.db, poor.id, true);
    await credit(server.deps.db, poor.id, 10, null);
    const refused = await embed(poor.key, TEXT);
    expect(refused.status).toBe(402);
    expect(sqliteOf(server.deps.db).select().from(usage).where(eq(usage.teamId, poor.id)).all()).toEqual([]);
  }, 60_000);
});
