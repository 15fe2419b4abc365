// Issue 40, item 3: whatever a Responses answer holds is valid input for the next turn. Output that ends in
// reasoning (stopped or cut while thinking) gets an empty assistant message after it, so rule 2 holds on replay.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ResponseAssembler } from "../../../src/api/responses/assembler.ts";
import { checkInputStructure } from "../../../src/api/responses/input-rules.ts";
import type { ResponsesRequestBody } from "../../../src/api/responses/schema.ts";
import type { CoreEvent } from "../../../src/inference/blocks.ts";
import { createSealer } from "../../../src/crypto/sealing.ts";

type Json = Record<string, any>;

function answer(events: CoreEvent[]): { output: Json[]; stream: Json[] } {
  const asm = new ResponseAssembler({ id: "resp_1", model: "m", createdAt: 1, echo: {}, sealer: createSealer(randomBytes(32)), includeEncrypted: true, summary: true });
  const stream = [...asm.start(), ...events.flatMap((e) => asm.push(e))] as Json[];
  return { output: stream[stream.length - 1]!.response.output, stream };
}

const thinking = (text: string): CoreEvent[] => [
  { type: "block_start", index: 0, block: { kind: "reasoning" } },
  { type: "block_delta", index: 0, delta: text },
  { type: "block_end", index: 0 },
];

/** The output replayed as Codex does (each reasoning item with content: null), between two user turns. */
const replay = (output: Json[]) => [{ role: "user", content: "hi" }, ...output.map((it) => (it.type === "reasoning" ? { ...it, content: null } : it)), { role: "user", content: "again" }];

describe("kiln's own Responses output replays as input", () => {
  for (const reason of ["length", "stop", "cancelled"] as const) {
    test(`output ending in reasoning (finish ${reason}) gets an empty assistant message after it`, () => {
      const { output, stream } = answer([...thinking("hmm"), { type: "finish", reason, stopSequence: null }]);
      expect(output.map((it) => it.type)).toEqual(["reasoning", "message"]);
      expect(output[1]).toMatchObject({ role: "assistant", status: reason === "stop" ? "completed" : "incomplete", content: [{ type: "output_text", text: "" }] });
      expect(stream.filter((e) => e.type === "response.output_item.done").map((e) => e.item.type)).toEqual(["reasoning", "message"]);
      expect(() => checkInputStructure(replay(output) as ResponsesRequestBody["input"])).not.toThrow();
    });
  }

  test("output with an answer after its reasoning is left as it is", () => {
    const { output } = answer([
      ...thinking("hmm"),
      { type: "block_start", index: 1, block: { kind: "text" } },
      { type: "block_delta", index: 1, delta: "Hi." },
      { type: "block_end", index: 1 },
      { type: "finish", reason: "stop", stopSequence: null },
    ]);
    expect(output.map((it) => it.type)).toEqual(["reasoning", "message"]);
    expect(output[1]!.content[0].text).toBe("Hi.");
    expect(() => checkInputStructure(replay(output) as ResponsesRequestBody["input"])).not.toThrow();
  });

  test("a web_search_call item of kiln's output replays too, and counts as what its reasoning led to", () => {
    const output = [
      { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "x" },
      { id: "ws_1", type: "web_search_call", status: "completed", action: { type: "search", query: "q", sources: [] } },
      { id: "msg_1", type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Found.", annotations: [] }] },
    ];
    expect(() => checkInputStructure(replay(output) as ResponsesRequestBody["input"])).not.toThrow();
  });
});
