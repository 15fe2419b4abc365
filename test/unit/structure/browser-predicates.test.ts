// Browser tests must not depend on which Chromium the box has: code given to a page as a string, or a predicate that
// Playwright polls inside the page (waitForFunction evals it there), runs into the dashboard's CSP ('unsafe-eval' is
// not allowed) on some Chromium builds and not others. Functions passed to evaluate, and conditions polled from the
// test with waitFor, work on all of them.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const TEST_ROOT = join(import.meta.dir, "..", "..");
const FORBIDDEN: [string, RegExp][] = [
  ["page code given as a string", /\.(evaluate|evaluateHandle|\$eval|\$\$eval)\(\s*["'`]/],
  ["a predicate polled inside the page", /\.waitForFunction\(/],
];

function* testFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "artifacts" && name !== "fixtures") yield* testFiles(path);
    } else if (name.endsWith(".ts") && path !== import.meta.path) yield path;
  }
}

/** The lines of `text` that break a rule, as "file:line: rule". */
function forbiddenPageCode(file: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    if (/^\s*\/\//.test(line)) return;
    for (const [what, re] of FORBIDDEN) if (re.test(line)) found.push(`${file}:${i + 1}: ${what}`);
  });
  return found;
}

test("the rule sees a string predicate, a string expression and waitForFunction, and passes a function", () => {
  expect(forbiddenPageCode("a.ts", `await page.waitForFunction(\`document.title === "x"\`);`)).toEqual(["a.ts:1: a predicate polled inside the page"]);
  expect(forbiddenPageCode("a.ts", `await page.evaluate("document.title")`)).toEqual(["a.ts:1: page code given as a string"]);
  expect(forbiddenPageCode("a.ts", `await page.evaluate(() => document.title)`)).toEqual([]);
});

test("no test hands a page code as a string or polls a predicate inside the page", () => {
  const found = [...testFiles(TEST_ROOT)].flatMap((f) => forbiddenPageCode(relative(TEST_ROOT, f), readFileSync(f, "utf8")));
  expect(found).toEqual([]);
});
