// Messages usage in Anthropic's terms: input_tokens without the cache reads, cache_read_input_tokens, and where each form carries them.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { MessageAssembler, messagesUsage } from "../../../src/api/messages/assembler.ts";
import { createSealer } from "../../../src/crypto/sealing.ts";

test("messagesUsage: input_tokens leaves out the cached prompt tokens, which cache_read_input_tokens carries; nothing is a cache write", () => {
  expect(messagesUsage({ inputTokens: 80, cachedTokens: 64, outputTokens: 7 })).toEqual({
    input_tokens: 16, cache_creation_input_tokens: 0, cache_read_input_tokens: 64, output_tokens: 7,
  });
  expect(messagesUsage({ inputTokens: 80, cachedTokens: 0, outputTokens: 7 })).toEqual({
    input_tokens: 80, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 7,
  });
});

test("message_start reports the whole prompt as input; message_delta and the message carry the split once it is known", () => {
  const asm = new MessageAssembler({ id: "msg_1", model: "m-v1", inputTokens: 80, sealer: createSealer(randomBytes(32)), tier: "standard" });
  const [start] = asm.start();
  expect((start!.message as { usage: unknown }).usage).toEqual({ input_tokens: 80, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0, service_tier: "standard" });
  asm.push({ type: "block_start", index: 0, block: { kind: "text" } });
  asm.push({ type: "block_delta", index: 0, delta: "Hi" });
  asm.push({ type: "block_end", index: 0 });
  expect(asm.push({ type: "usage", usage: { inputTokens: 80, outputTokens: 3, reasoningTokens: 0, cachedTokens: 64 } })).toEqual([]);
  const [delta, stop] = asm.push({ type: "finish", reason: "stop", stopSequence: null });
  const split = { input_tokens: 16, cache_creation_input_tokens: 0, cache_read_input_tokens: 64, output_tokens: 3 };
  expect(delta).toEqual({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: split });
  expect(stop).toEqual({ type: "message_stop" });
  expect(asm.message().usage).toEqual({ ...split, service_tier: "standard" });
});
