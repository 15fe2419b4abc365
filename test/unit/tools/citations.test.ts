// url_citation annotations: markers over the sources they name, code-point indexes, the whole answer when none.
import { describe, expect, test } from "bun:test";
import { citationsFor } from "../../../src/tools/citations.ts";

const sources = [
  { n: 1, title: "One", url: "https://one.example" },
  { n: 2, title: "Two", url: "https://two.example" },
];

describe("citationsFor", () => {
  test("each [n] marker naming a given source is annotated over the marker", () => {
    const text = "Paris [2] is big [1].";
    expect(citationsFor(text, sources)).toEqual([
      { type: "url_citation", start_index: 6, end_index: 9, url: "https://two.example", title: "Two" },
      { type: "url_citation", start_index: 17, end_index: 20, url: "https://one.example", title: "One" },
    ]);
  });

  test("indexes count code points: an emoji before a marker counts once", () => {
    const text = "😀 x [1]";
    const [a] = citationsFor(text, sources);
    expect(Array.from(text).slice(a!.start_index, a!.end_index).join("")).toBe("[1]");
    expect(a!.start_index).toBe(4);
  });

  test("markers naming no given source are ignored; if none is left, the whole answer is annotated with every source", () => {
    const text = "See [7] and [0], 😀.";
    const all = citationsFor(text, sources);
    expect(all.map((a) => a.url)).toEqual(["https://one.example", "https://two.example"]);
    for (const a of all) expect([a.start_index, a.end_index]).toEqual([0, Array.from(text).length]);
  });

  test("no sources, no annotations", () => {
    expect(citationsFor("text [1]", [])).toEqual([]);
  });
});
