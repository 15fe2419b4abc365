import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { profilerFromEnv, StepProfiler } from "../../../workers/text/step-profile.ts";
import { tempDir } from "../../helpers/kiln.ts";

describe("StepProfiler", () => {
  test("charges posts to the step under way and the gap to the step before; appends on flush", () => {
    const file = join(tempDir("kiln-prof-"), "p.jsonl");
    let wall = 1_000;
    const p = new StepProfiler(file, () => wall++);
    p.begin(0);
    p.addPost(0.5);
    p.end(10, { decodeRows: 1, prefillTokens: 0, runMs: 8, stepMs: 10 });
    p.begin(12);
    p.end(20, { decodeRows: 1, prefillTokens: 0, runMs: 7, stepMs: 8 });
    p.flush();
    // After an idle period the first step charges no gap to the last one.
    p.begin(500);
    p.end(510, { decodeRows: 2, mediaRows: 1, prefillTokens: 30, runMs: 9, encodeMs: 4, stepMs: 10 });
    p.flush();
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { decodeRows: 1, prefillTokens: 0, runMs: 8, stepMs: 10, postMs: 0.5, gapMs: 2, at: 1_000 },
      { decodeRows: 1, prefillTokens: 0, runMs: 7, stepMs: 8, postMs: 0, gapMs: 0, at: 1_001 },
      { decodeRows: 2, mediaRows: 1, prefillTokens: 30, runMs: 9, encodeMs: 4, stepMs: 10, postMs: 0, gapMs: 0, at: 1_002 },
    ]);
  });
  test("a loop that never goes idle still writes its records every few hundred steps, each with its gap", () => {
    const file = join(tempDir("kiln-prof-"), "p.jsonl");
    const p = new StepProfiler(file, () => 0);
    for (let i = 0; i < 300; i++) {
      p.begin(i * 10);
      p.end(i * 10 + 8, { decodeRows: 1, prefillTokens: 0, runMs: 7, stepMs: 8 });
    }
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.length).toBe(256);
    expect(lines.every((l) => l.gapMs === 2)).toBe(true);
  });

  test("only a named file turns it on", () => {
    expect(profilerFromEnv({})).toBeNull();
    expect(profilerFromEnv({ KILN_PROFILE_FILE: "/tmp/x" })).toBeInstanceOf(StepProfiler);
  });
});
