// The dashboard's Models tab through app.handle: every served model with the numbers GET /v1/models gives, its
// health and what the workers report, and for a member which models their team may use.
import { beforeAll, describe, expect, test } from "bun:test";
import { updateTeam } from "../../../src/db/teams-repo.ts";
import { ModelRegistry, scanModels } from "../../../src/models/registry.ts";
import { addUser, DashboardClient } from "../../helpers/dashboard-client.ts";
import { fakeManifest, writeFakeModel } from "../../helpers/fake-model.ts";
import { tempDir, testKiln } from "../../helpers/kiln.ts";

/** The table row of one model in the table with this id. */
function rowOf(page: string, tableId: string, model: string): string {
  const table = page.slice(page.indexOf(`id="${tableId}"`), page.indexOf("</table>", page.indexOf(`id="${tableId}"`)));
  const start = table.indexOf(`<tr data-model="${model}"`);
  if (start < 0) throw new Error(`no row for ${model} in ${tableId}`);
  return table.slice(start, table.indexOf("</tr>", start));
}

/** The text of each `<td>` of a row, tags removed. */
const cells = (row: string) => [...row.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim());

describe("dashboard Models tab", async () => {
  const dir = tempDir();
  writeFakeModel(dir, "a", fakeManifest("alpha-model-v1", { display_name: "Alpha One", pricing: { input_per_million: 0.15, cached_input_per_million: 0.075, output_per_million: 0.6, per_image: null } }));
  writeFakeModel(dir, "b", fakeManifest("beta-model-v2", { context_length: 8192, pricing: { input_per_million: 2.5, output_per_million: 10, per_image: 0.04 } }));
  const [alpha, beta] = scanModels(dir).models;
  // A vision model as the registry holds one (its folder's graphs are not needed to list it).
  const vision = {
    ...beta!, id: "vision-model-v1", displayName: "Vision One",
    capabilities: { ...beta!.capabilities, vision: true, tools: false },
    media: { layout: "llava", image: { token: "<image>", tokenId: 32000, size: 336, patchSize: 14, tokens: 576 }, audio: null },
  };
  const k = await testKiln({ registry: new ModelRegistry([alpha!, beta!, vision]) });
  const handle = (r: Request) => k.handle(r);
  const operator = new DashboardClient(handle);
  const member = new DashboardClient(handle);

  beforeAll(async () => {
    expect((await operator.signIn("olive", await addUser(k.deps.db, "olive", "operator", null))).status).toBe(303);
    expect((await member.signIn("mia", await addUser(k.deps.db, "mia", "member", k.teamId))).status).toBe(303);
  });

  test("every served model with the context, capabilities and prices GET /v1/models gives", async () => {
    const page = await operator.get("/dashboard/models");
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/style="|<style|<script>/);
    expect(page.text).toContain('id="models-count">3</div>');
    const listed: any[] = ((await (await k.req("/v1/models")).json()) as any).data;
    expect(listed.map((m) => m.id)).toEqual(["alpha-model-v1", "beta-model-v2", "vision-model-v1"]);
    for (const m of listed) {
      const [name, context, , input, cached, output, image, health] = cells(rowOf(page.text, "models-table", m.id));
      // A display name that only repeats the id is not shown twice.
      expect(name).toBe(m.display_name === m.id ? m.id : `${m.display_name} ${m.id}`);
      expect(context).toBe(m.context_length.toLocaleString("en-US"));
      expect(health).toBe(m.status);
      // Cached input is the input price unless kiln.json sets its own.
      expect([input, cached, output, image]).toEqual(
        m.id === "alpha-model-v1" ? ["0.15", "0.075", "0.60", "–"] : ["2.50", "2.50", "10.00", "0.04"],
      );
      expect(m.pricing.cached_input_per_million).toBe(m.id === "alpha-model-v1" ? 0.075 : 2.5);
    }
    expect(cells(rowOf(page.text, "models-table", "beta-model-v2"))[1]).toBe("8,192");
    expect(cells(rowOf(page.text, "models-table", "alpha-model-v1"))[2]).toBe("chat completions tools reasoning");
    expect(cells(rowOf(page.text, "models-table", "vision-model-v1"))[2]).toBe("chat completions reasoning vision");
    // An operator sees every model without a per-team column.
    expect(page.text).not.toContain("not available to your team");
    expect(page.text).not.toContain("<th>Your team</th>");
  });

  test("media facts, as /v1/models states them, for the models that have them", async () => {
    const page = await operator.get("/dashboard/models");
    const at = page.text.indexOf('id="model-media"');
    const facts = page.text.slice(at, page.text.indexOf("</section>", at));
    const image = ((await (await k.req("/v1/models/vision-model-v1")).json()) as any).media.image;
    expect(image).toEqual({ size: 336, patch_size: 14, tokens_per_image: 576 });
    expect(facts).toContain('data-model="vision-model-v1"');
    expect(facts).toContain(`<dt>Image input</dt><dd>${image.size}×${image.size} px, ${image.patch_size} px patches, ${image.tokens_per_image} prompt tokens per image</dd>`);
    expect(facts).not.toContain('data-model="alpha-model-v1"');
  });

  test("health and the workers' figures come from the registry and the metrics sources", async () => {
    let page = await operator.get("/dashboard/models");
    expect(cells(rowOf(page.text, "workers-table", "alpha-model-v1"))).toEqual(["alpha-model-v1", "operational", "–", "–", "0", "0", "–"]);
    expect(page.text).toContain("reports no workers");

    k.deps.registry.setHealth("beta-model-v2", "degraded", "worker_hung");
    k.deps.metrics.workerRestarted("beta-model-v2");
    k.deps.metrics.workerRestarted("beta-model-v2");
    k.deps.metrics.watch({
      queueDepth: () => ({}),
      workers: () => [
        { workerId: 1, model: "beta-model-v2", state: "ready", held: 3, rssBytes: 512 * 1024 * 1024 },
        { workerId: 2, model: "beta-model-v2", state: "loading", held: 0, rssBytes: 256 * 1024 * 1024 },
        { workerId: 3, model: "alpha-model-v1", state: "ready", held: 1, rssBytes: 100 * 1024 * 1024 },
      ],
    });
    try {
      page = await operator.get("/dashboard/models");
      expect(cells(rowOf(page.text, "workers-table", "beta-model-v2"))).toEqual(["beta-model-v2", "degraded", "1 ready, 1 loading", "3", "0", "2", "768.0 MiB"]);
      expect(cells(rowOf(page.text, "workers-table", "alpha-model-v1"))).toEqual(["alpha-model-v1", "operational", "1 ready", "1", "0", "0", "100.0 MiB"]);
      expect(cells(rowOf(page.text, "workers-table", "vision-model-v1"))).toEqual(["vision-model-v1", "operational", "none", "0", "0", "0", "–"]);
      expect(cells(rowOf(page.text, "models-table", "beta-model-v2"))[7]).toBe("degraded a worker stopped responding");
      expect(page.text).toContain('id="models-operational">2 of 3</div>');
      // The same restarts the scrape reports.
      expect((await k.deps.metrics.render()).body).toContain('kiln_worker_restarts_total{model="beta-model-v2"} 2');
    } finally {
      k.deps.registry.setHealth("beta-model-v2", "operational");
    }
  });

  test("a member sees which models their team may use, as the team's keys do", async () => {
    let page = await member.get("/dashboard/models");
    expect(page.status).toBe(200);
    expect(page.text).toContain(`href="/dashboard/teams/${k.teamId}/keys"`);
    expect(page.text).not.toContain("not available to your team");
    expect(page.text).toContain('id="models-available">3 of 3</div>');
    // Memory is the operator's concern; the member's workers table has no such column.
    expect(page.text).not.toContain('<th class="num">Memory</th>');

    await updateTeam(k.deps.db, k.teamId, { allowedModels: ["alpha-model-v1"] });
    try {
      page = await member.get("/dashboard/models");
      expect(cells(rowOf(page.text, "models-table", "alpha-model-v1")).at(-1)).toBe("available");
      expect(cells(rowOf(page.text, "models-table", "beta-model-v2")).at(-1)).toBe("not available to your team");
      expect(rowOf(page.text, "models-table", "beta-model-v2")).toContain('class="unavailable"');
      expect(page.text).toContain('id="models-available">1 of 3</div>');
      // What the team's key lists agrees.
      const listed: any[] = ((await (await k.req("/v1/models")).json()) as any).data;
      expect(listed.map((m) => m.id)).toEqual(["alpha-model-v1"]);
    } finally {
      await updateTeam(k.deps.db, k.teamId, { allowedModels: null });
    }
  });

  test("no models: an empty state, not an empty table", async () => {
    const bare = await testKiln({ registry: new ModelRegistry([]) });
    const client = new DashboardClient((r) => bare.handle(r));
    await client.signIn("olive", await addUser(bare.deps.db, "olive", "operator", null));
    const page = await client.get("/dashboard/models");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<p class="empty">No models are served.');
    expect(page.text).not.toContain('id="models-table"');
  });
});
