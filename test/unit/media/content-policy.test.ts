import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ApiError } from "../../../src/errors/api-error.ts";
import { checkMedium, checkPrompt, EMPTY_POLICY, loadContentPolicy, parseContentPolicy } from "../../../src/media/content-policy.ts";
import { tempDir } from "../../helpers/kiln.ts";

const HASH = "a".repeat(64);

function refusal(fn: () => void): ApiError {
  try {
    fn();
  } catch (e) {
    return e as ApiError;
  }
  throw new Error("expected a refusal");
}

describe("content policy", () => {
  test("patterns match case-insensitively; hashes match exactly; each refusal is 400 content_policy_violation", () => {
    const p = parseContentPolicy(JSON.stringify({ prompt_patterns: ["forbidden\\s+word"], refused_media_sha256: [HASH.toUpperCase()] }));
    checkPrompt(p, "a harmless prompt");
    const e = refusal(() => checkPrompt(p, "say the FORBIDDEN   word"));
    expect(e.toBody().error).toEqual({ message: "The prompt was refused by this server's content policy.", type: "invalid_request_error", param: null, code: "content_policy_violation" });
    expect(e.status).toBe(400);
    checkMedium(p, "b".repeat(64), "input.0.content.1");
    const m = refusal(() => checkMedium(p, HASH, "input.0.content.1"));
    expect([m.param, m.code]).toEqual(["input.0.content.1", "content_policy_violation"]);
  });

  test("the empty policy refuses nothing; no file means the empty policy", () => {
    checkPrompt(EMPTY_POLICY, "anything at all");
    expect(loadContentPolicy(undefined)).toBe(EMPTY_POLICY);
  });

  test("a broken policy file stops start-up with the reason", () => {
    expect(() => parseContentPolicy("{")).toThrow("is not JSON");
    expect(() => parseContentPolicy("[]")).toThrow("must be a JSON object");
    expect(() => parseContentPolicy('{"patterns": []}')).toThrow("unknown field(s) patterns");
    expect(() => parseContentPolicy('{"prompt_patterns": ["("]}')).toThrow("prompt_patterns[0] is not a valid regular expression");
    expect(() => parseContentPolicy('{"refused_media_sha256": ["abc"]}')).toThrow("refused_media_sha256[0] is not a hex SHA-256");
    const dir = tempDir("kiln-policy-");
    expect(() => loadContentPolicy(join(dir, "missing.json"))).toThrow("cannot be read (ENOENT)");
    const file = join(dir, "policy.json");
    writeFileSync(file, '{"prompt_patterns": [1]}');
    expect(() => loadContentPolicy(file)).toThrow(`the content policy file ${file} prompt_patterns must be an array of strings`);
  });
});
