// Lanes through the real server and its worker: service_tier resolved and echoed, an interactive request admitted beside
// a full set of flex rows gets its first token within a few steps, and the flex rows' greedy text is what it is unpreempted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listTeams, updateTeam } from "../../src/db/teams-repo.ts";
import { maxBatchOf } from "../../src/scheduler/text-backend.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait-for.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  // priority is a tier a team must be granted (src/access/tier-policy.ts): this server's one team is.
  for (const team of await listTeams(s.deps.db)) await updateTeam(s.deps.db, team.id, { serviceTiers: ["default", "flex", "priority", "batch"] });
});
afterAll(() => s.stop(1000));

const ask = (content: string) => [{ role: "user", content }];

async function post(path: string, body: Record<string, unknown>) {
  const res = await fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: s.modelId, temperature: 0, ...body }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** A chat stream as it arrives: its text and reasoning, when each of their chunks came (performance.now()), and the tiers its chunks named. */
interface Streamed {
  text: string;
  reasoning: string;
  times: number[];
  tiers: Set<string>;
  done: Promise<void>;
}

function stream(body: Record<string, unknown>): Streamed {
  const out: Streamed = { text: "", reasoning: "", times: [], tiers: new Set(), done: Promise.resolve() };
  out.done = (async () => {
    const res = await fetch(`${s.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: s.modelId, temperature: 0, stream: true, ...body }),
    });
    if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
    const decoder = new TextDecoder();
    let buf = "";
    for await (const bytes of res.body!) {
      const now = performance.now();
      buf += decoder.decode(bytes, { stream: true });
      for (let end = buf.indexOf("\n\n"); end >= 0; end = buf.indexOf("\n\n")) {
        const data = buf.slice(0, end).replace(/^data: /, "");
        buf = buf.slice(end + 2);
        if (data === "[DONE]") continue;
        const chunk = JSON.parse(data);
        out.tiers.add(chunk.service_tier);
        const delta = chunk.choices[0]?.delta ?? {};
        out.text += delta.content ?? "";
        out.reasoning += delta.reasoning_content ?? "";
        if (delta.content || delta.reasoning_content) out.times.push(now);
      }
    }
  })();
  return out;
}

describe("service_tier", () => {
  test("each answer says the lane it ran in: auto and absent are default; a tier outside the format's is a 400", async () => {
    for (const [asked, echoed] of [[undefined, "default"], ["auto", "default"], ["default", "default"], ["flex", "flex"], ["priority", "priority"]] as const) {
      const r = await post("/v1/chat/completions", { messages: ask("hi"), max_tokens: 2, ...(asked ? { service_tier: asked } : {}) });
      expect(r.status).toBe(200);
      expect(r.body.service_tier).toBe(echoed);
    }
    const bad = await post("/v1/chat/completions", { messages: ask("hi"), max_tokens: 2, service_tier: "scale" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("service_tier");
    const resp = await post("/v1/responses", { input: "hi", max_output_tokens: 16, store: false, service_tier: "flex" });
    expect(resp.status).toBe(200);
    expect(resp.body.service_tier).toBe("flex");
    const plain = await post("/v1/responses", { input: "hi", max_output_tokens: 16, store: false });
    expect(plain.body.service_tier).toBe("default");

    // Messages: the format's own values, both the default lane, named in its usage.
    const msg = await post("/v1/messages", { messages: ask("hi"), max_tokens: 2, service_tier: "standard_only" });
    expect(msg.status).toBe(200);
    expect(msg.body.usage.service_tier).toBe("standard");
    const wrong = await post("/v1/messages", { messages: ask("hi"), max_tokens: 2, service_tier: "flex" });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain("service_tier");
  });
});

describe("lanes", () => {
  test("an interactive request beside a full set of flex rows gets its first token within a few steps; the flex rows' greedy text is unchanged", async () => {
    const rows = maxBatchOf(s.deps.registry.list()[0]!);
    expect(rows).toBeGreaterThan(1);
    const flex = (i: number) => ({ messages: ask(`flex job ${i}: describe the sea at night`), max_tokens: 400, ignore_eos: true, service_tier: "flex" });
    // Unpreempted: the same requests batched together with nothing else running.
    const reference = await Promise.all(Array.from({ length: rows }, (_, i) => post("/v1/chat/completions", flex(i))));
    expect(reference.every((r) => r.status === 200 && r.body.usage.completion_tokens === 400)).toBe(true);

    const running = Array.from({ length: rows }, (_, i) => stream(flex(i)));
    await waitFor(() => running.every((r) => r.times.length >= 5), { what: `all ${rows} flex rows decoding` });
    const sent = performance.now();
    const interactive = stream({ messages: ask("a quick question"), max_tokens: 6 });
    await interactive.done;
    await Promise.all(running.map((r) => r.done));

    const first = interactive.times[0]!;
    // Tokens each flex row produced between the request's arrival and its first token: the steps it waited.
    const waited = Math.max(...running.map((r) => r.times.filter((t) => t > sent && t <= first).length));
    expect(waited).toBeLessThan(40);
    // The flex rows were all still running then (the request did not wait for one to end).
    expect(running.every((r) => r.times.at(-1)! > first)).toBe(true);
    running.forEach((r, i) => {
      const message = reference[i]!.body.choices[0].message;
      expect([r.reasoning, r.text]).toEqual([message.reasoning_content ?? "", message.content]);
    });
    expect([...interactive.tiers]).toEqual(["default"]);
    expect(running.every((r) => r.tiers.size === 1 && r.tiers.has("flex"))).toBe(true);
  });
});
