// The official openai client's structured-output helpers, unmodified, against a real kiln on the random-weight
// tiny model: chat.completions.parse and responses.parse with zod schemas, and a zodFunction tool forced by name.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { zodFunction, zodResponseFormat, zodTextFormat } from "openai/helpers/zod";
import { z } from "zod";
import { openaiTestServer } from "../helpers/openai-server.ts";
import type { TestServer } from "../helpers/server.ts";

let server: TestServer;
let client: OpenAI;

beforeAll(async () => ({ server, client } = await openaiTestServer()));
afterAll(() => server.stop(1000));

// Enums, booleans, nesting, an array and a nullable: every field is checked by zod when the helper parses. No
// numbers: random weights may write one past the double range, which zod (rightly) refuses as Infinity.
const Plan = z.object({
  mode: z.enum(["fast", "slow"]),
  steps: z.array(z.object({ done: z.boolean(), cost: z.enum(["low", "high"]) })),
  note: z.object({ urgent: z.boolean() }).nullable(),
});

describe("openai structured-output helpers", () => {
  test("chat.completions.parse with zodResponseFormat returns the parsed object", async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const r = await client.chat.completions.parse({
        model: server.modelId,
        messages: [{ role: "user", content: "Plan it" }],
        response_format: zodResponseFormat(Plan, "plan"),
        max_tokens: 1500,
        temperature: 1,
        seed,
      });
      const msg = r.choices[0]!.message;
      expect(r.choices[0]!.finish_reason).toBe("stop");
      expect(msg.parsed).not.toBeNull();
      expect(Plan.parse(msg.parsed)).toEqual(msg.parsed!);
    }
  });

  test("a zodFunction tool forced by name comes back with parsed_arguments", async () => {
    const Lookup = z.object({ exact: z.boolean(), scope: z.enum(["all", "recent"]) });
    const r = await client.chat.completions.parse({
      model: server.modelId,
      messages: [{ role: "user", content: "look it up" }],
      tools: [zodFunction({ name: "lookup", parameters: Lookup })],
      tool_choice: { type: "function", function: { name: "lookup" } },
      max_tokens: 1500,
      temperature: 1,
      seed: 7,
    });
    const call = r.choices[0]!.message.tool_calls![0]!;
    expect(call.type).toBe("function");
    if (call.type !== "function") return;
    expect(call.function.name).toBe("lookup");
    expect(Lookup.parse(call.function.parsed_arguments)).toEqual(call.function.parsed_arguments as never);
  });

  test("responses.parse with zodTextFormat returns output_parsed", async () => {
    for (const seed of [1, 2, 3]) {
      const r = await client.responses.parse({
        model: server.modelId,
        input: "Plan it",
        text: { format: zodTextFormat(Plan, "plan") },
        max_output_tokens: 1500,
        temperature: 1,
        seed,
      } as Parameters<typeof client.responses.parse>[0]);
      expect(r.status).toBe("completed");
      expect(r.output_parsed).not.toBeNull();
      expect(Plan.parse(r.output_parsed)).toEqual(r.output_parsed as never);
    }
  });
});
