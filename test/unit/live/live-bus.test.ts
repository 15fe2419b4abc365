// The live bus's wire format: an event's text round-trips exactly (its JSON untouched, spaces and newlines included),
// the end is one word, and text no kiln sent is ignored rather than misread.
import { expect, test } from "bun:test";
import { cancelChannel, decodeMessage, encodeEnd, encodeEvent, eventsChannel } from "../../../src/live/live-bus.ts";

test("an event round-trips with its JSON exactly as stored", () => {
  const json = JSON.stringify({ type: "response.output_text.delta", delta: "two words\nand a line", sequence_number: 12 });
  const ev = { sequence: 12, type: "response.output_text.delta", json };
  expect(encodeEvent(ev)).toBe(`12 response.output_text.delta ${json}`);
  expect(decodeMessage(encodeEvent(ev))).toEqual({ kind: "event", ev });
});

test("the end is its own message", () => {
  expect(decodeMessage(encodeEnd())).toEqual({ kind: "end" });
});

test("text no kiln sent is ignored", () => {
  for (const text of ["", "hello", "12 only-a-type", "x response.created {}", "-1 error {}", "1.5 error {}", "9007199254740993 error {}"]) {
    expect(decodeMessage(text)).toBeNull();
  }
});

test("channels: one per response for its events, one for the cancel of its job, under the prefix", () => {
  expect(eventsChannel("kiln:", "resp_1")).toBe("kiln:live:resp_1");
  expect(cancelChannel("kiln:", "resp_1")).toBe("kiln:live:resp_1:cancel");
});
