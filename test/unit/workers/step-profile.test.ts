import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { profilerFromEnv, StepProfiler } from "../../../workers/text/step-profile.ts";
import { tempDir } from "../../helpers/kiln.ts";

describe("StepProfiler", () => {
  test("charges posts to the step under way and the gap to the step before; appends on flush", () => {
    const file = join(tempDir("kiln-prof-"), "p.jsonl");
    const p = new StepProfiler(file);
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
      { decodeRows: 1, prefillTokens: 0, runMs: 8, stepMs: 10, postMs: 0.5, gapMs: 2 },
      { decodeRows: 1, prefillTokens: 0, runMs: 7, stepMs: 8, postMs: 0, gapMs: 0 },
      { decodeRows: 2, mediaRows: 1, prefillTokens: 30, runMs: 9, encodeMs: 4, stepMs: 10, postMs: 0, gapMs: 0 },
    ]);
  });
  test("only a named file turns it on", () => {
    expect(profilerFromEnv({})).toBeNull();
    expect(profilerFromEnv({ KILN_PROFILE_FILE: "/tmp/x" })).toBeInstanceOf(StepProfiler);
  });
});
