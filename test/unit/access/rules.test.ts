import { describe, expect, test } from "bun:test";
import { type AccessRules, endpointRefusal, familyOf, familyRefusal, mayUseModel, modelRefusal, parseList, parseRestrictionArg, UNRESTRICTED } from "../../../src/access/rules.ts";

const rules = (key: Partial<AccessRules["key"]>, team: Partial<AccessRules["team"]> = {}): AccessRules => ({
  key: { ...UNRESTRICTED, ...key }, team: { ...UNRESTRICTED, ...team },
});

describe("permissions", () => {
  test("a path's family is its first segment under /v1", () => {
    expect(familyOf("/v1/chat/completions")).toBe("chat");
    expect(familyOf("/v1/responses/input_tokens")).toBe("responses");
    expect(familyOf("/v1/images/edits")).toBe("images");
    expect(familyOf("/v1/files/file-1/content")).toBe("files");
    expect(familyOf("/swagger")).toBeNull();
  });

  test("endpoint restrictions: the key's and the team's; the model list is never refused; new families are refused to restricted keys", () => {
    const r = rules({ endpoints: ["chat"] });
    expect(endpointRefusal(r, "/v1/chat/completions")).toBeNull();
    const refused = endpointRefusal(r, "/v1/messages")!;
    expect(refused.toBody()).toEqual({ error: { type: "permission_error", message: "This API key may not use the messages endpoints (/v1/messages).", param: null, code: null } });
    expect(refused.status).toBe(403);
    expect(endpointRefusal(r, "/v1/models")).toBeNull();
    expect(endpointRefusal(r, "/v1/embeddings")?.status).toBe(403);
    expect(endpointRefusal(rules({}, { endpoints: ["responses"] }), "/v1/chat/completions")?.message).toStartWith("Your team may not");
    expect(endpointRefusal(rules({}), "/v1/anything")).toBeNull();
  });

  test("a family refused by name (a recovered job has no path): the same 403, and the model list still always allowed", () => {
    const r = rules({ endpoints: ["chat"] });
    expect(familyRefusal(r, "responses")?.message).toBe("This API key may not use the responses endpoints.");
    expect(familyRefusal(r, "chat")).toBeNull();
    expect(familyRefusal(r, "models")).toBeNull();
  });

  test("model restrictions: both must allow it; the 403 names the model and param", () => {
    const r = rules({ models: ["a-v1", "b-v1"] }, { models: ["b-v1", "c-v1"] });
    expect(mayUseModel(r, "b-v1")).toBe(true);
    expect(mayUseModel(r, "a-v1")).toBe(false);
    expect(mayUseModel(r, "c-v1")).toBe(false);
    expect(modelRefusal(r, "a-v1")!.toBody().error).toEqual({ type: "permission_error", message: "Your team may not use the model 'a-v1'.", param: "model", code: null });
    expect(modelRefusal(r, "c-v1")!.message).toBe("This API key may not use the model 'c-v1'.");
    expect(modelRefusal(r, "b-v1")).toBeNull();
  });

  test("stored lists: null is unrestricted, a damaged value allows nothing", () => {
    expect(parseList(null)).toBeNull();
    expect(parseList('["a"]')).toEqual(["a"]);
    expect(parseList("{oops")).toEqual([]);
    expect(parseList("[1]")).toEqual([]);
  });

  test("CLI lists", () => {
    expect(parseRestrictionArg("all", "models")).toBeNull();
    expect(parseRestrictionArg("a, b,a", "models")).toEqual(["a", "b"]);
    expect(parseRestrictionArg("chat,files", "endpoints")).toEqual(["chat", "files"]);
    expect(parseRestrictionArg("chat,embeddings", "endpoints")).toEqual(["chat", "embeddings"]);
    expect(parseRestrictionArg("chat,batches", "endpoints")).toEqual(["chat", "batches"]);
    expect(() => parseRestrictionArg("chat,fine_tuning", "endpoints")).toThrow("unknown endpoint family fine_tuning");
    expect(() => parseRestrictionArg(" , ", "models")).toThrow("comma-separated");
  });
});
