// The core (src/inference) is format-neutral: it names no API family, no family's ids and no built-in tool, so a
// family or a tool is added in its own folder without an edit of the core.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const CORE = join(import.meta.dir, "..", "..", "..", "src", "inference");
const FORBIDDEN: [string, RegExp][] = [
  ["a family's name", /\b(Responses|Messages|Chat Completions|OpenAI|Anthropic)\b/],
  ["a family's id prefix", /["'`](chatcmpl-|resp_|msg_|toolu_|fc_|rs_|ws_|fco_|call_)/],
  ["a family's parameter", /\b(response_format|reasoning_effort|max_output_tokens|tool_use_id)\b|"required"/],
  ["a built-in tool", /web_search|web-search|searxng/i],
];

test("src/inference names no family, family id, family parameter or built-in tool", () => {
  const found: string[] = [];
  for (const file of readdirSync(CORE).filter((f) => f.endsWith(".ts"))) {
    readFileSync(join(CORE, file), "utf8").split("\n").forEach((line, i) => {
      for (const [what, re] of FORBIDDEN) if (re.test(line)) found.push(`${file}:${i + 1}: ${what}: ${line.trim().slice(0, 100)}`);
    });
  }
  expect(found).toEqual([]);
});
