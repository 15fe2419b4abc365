// Declared public prefixes: the prompt's opening tokens equal to one (through the model's template), and the scope.
import { describe, expect, test } from "bun:test";
import { prefixScope, publicTokens, sharedLength } from "../../../src/inference/public-prefix.ts";
import type { ModelTokenizer } from "../../../src/inference/tokenizer.ts";

/** A tokenizer whose template writes "S:<text>|A:" and whose tokens are characters. */
function fakeTokenizer(): ModelTokenizer & { renders: number } {
  const t = {
    renders: 0,
    renderChat(conv: { parts: { text?: string }[] }[]) {
      t.renders++;
      return `S:${conv[0]!.parts[0]!.text}|A:`;
    },
    async encodePrompt(text: string) {
      return Array.from(text, (c) => c.charCodeAt(0));
    },
  };
  return t as unknown as ModelTokenizer & { renders: number };
}

const ids = (s: string) => Array.from(s, (c) => c.charCodeAt(0));

describe("public prefixes", () => {
  test("the longest run of opening tokens a declared prefix shares with the prompt; rendered once per tokenizer", async () => {
    const tok = fakeTokenizer();
    expect(await publicTokens(tok, ["You are kiln."], ids("S:You are kiln.|U:hi"))).toBe("S:You are kiln.|".length);
    expect(await publicTokens(tok, ["You are kiln.", "Be brief."], ids("S:Be brief.|A:"))).toBe("S:Be brief.|A:".length);
    expect(await publicTokens(tok, ["You are kiln."], ids("S:Secret plan|U:hi"))).toBe(2);
    expect(await publicTokens(tok, [], ids("S:You are kiln."))).toBe(0);
    expect(tok.renders).toBe(2);
  });

  test("scopes: a team's own, or one for all teams", () => {
    expect(prefixScope(7, "team", 3)).toEqual({ scope: "team:7", publicTokens: 3 });
    expect(prefixScope(7, "all", 0)).toEqual({ scope: "all", publicTokens: 0 });
    expect(sharedLength([1, 2, 3], [1, 2, 4])).toBe(2);
  });
});
