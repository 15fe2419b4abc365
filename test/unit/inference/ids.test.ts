import { expect, test } from "bun:test";
import { newCallId, newChatCompletionId, newRequestId } from "../../../src/inference/ids.ts";

test("ids carry their format's prefix and are unique", () => {
  expect(newRequestId()).toMatch(/^req_[0-9a-f]{32}$/);
  expect(newChatCompletionId()).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
  expect(newCallId()).toMatch(/^call_[0-9a-f]{24}$/);
  expect(new Set(Array.from({ length: 100 }, newCallId)).size).toBe(100);
});
