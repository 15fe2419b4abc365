import { describe, expect, test } from "bun:test";
import { SequenceText } from "../../../workers/text/sequence-text.ts";

const enc = new TextEncoder();
// Ids 0–9 are whole strings; 100+ are single raw bytes, so characters can be split across tokens.
const table: Record<number, Uint8Array> = { 0: enc.encode("Hi"), 1: enc.encode(" there"), 2: enc.encode("<|im_end|>"), 3: enc.encode("<think>"), 4: enc.encode("STOP") };
const bytes = (id: number) => (id >= 100 ? Uint8Array.of(id - 100) : table[id]!);
const b = (x: number) => 100 + x;

describe("SequenceText", () => {
  test("never splits a multi-byte character", () => {
    const t = new SequenceText(bytes, [], []);
    // "é" is C3 A9; "😀" is F0 9F 98 80.
    expect([b(0xc3), b(0xa9)].map((id) => t.push(id).text)).toEqual(["", "é"]);
    expect([b(0xf0), b(0x9f), b(0x98), b(0x80)].map((id) => t.push(id).text)).toEqual(["", "", "", "😀"]);
  });

  test("drops an unfinished character when the sequence ends", () => {
    const t = new SequenceText(bytes, [], []);
    expect(t.push(0).text).toBe("Hi");
    expect(t.push(b(0xe2)).text).toBe("");
    expect(t.end()).toBe("");
  });

  test("stop token ids end without text; other specials are text", () => {
    const t = new SequenceText(bytes, [], [2]);
    expect(t.push(3)).toEqual({ text: "<think>" });
    expect(t.push(2)).toEqual({ text: "", stopToken: true });
    // Not listed as a stop id here, so it is ordinary text.
    expect(new SequenceText(bytes, [], []).push(2)).toEqual({ text: "<|im_end|>" });
  });

  test("stop sequences match across tokens, including inside a multi-byte character run", () => {
    const t = new SequenceText(bytes, ["ré!"], []);
    expect(t.push(0).text).toBe("Hi");
    expect(t.push(b(0x72)).text).toBe("");
    expect(t.push(b(0xc3)).text).toBe("");
    expect(t.push(b(0xa9)).text).toBe("");
    expect(t.push(b(0x21))).toEqual({ text: "", stopSequence: "ré!" });
  });

  test("held-back text is released by end()", () => {
    const t = new SequenceText(bytes, ["STOPPED"], []);
    expect(t.push(1).text).toBe(" there");
    expect(t.push(4).text).toBe("");
    expect(t.end()).toBe("STOP");
  });
});
