// The Responses input-structure rules 1–5, one at a time, each with its param.
import { describe, expect, test } from "bun:test";
import { checkInputStructure } from "../../../src/api/responses/input-rules.ts";
import type { ResponsesRequestBody } from "../../../src/api/responses/schema.ts";
import { ApiError } from "../../../src/errors/api-error.ts";

type Items = Exclude<ResponsesRequestBody["input"], string>;
const user = (text: string) => ({ role: "user", content: text });
const call = (id: string) => ({ type: "function_call", call_id: id, name: "f", arguments: "{}" });
const output = (id: string) => ({ type: "function_call_output", call_id: id, output: "ok" });
const reasoning = (id?: string, enc?: string) => ({ type: "reasoning", ...(id ? { id } : {}), summary: [], ...(enc ? { encrypted_content: enc } : {}) });
const said = (text: string, phase?: string) => ({ role: "assistant", content: text, ...(phase ? { phase } : {}) });

function refusal(items: unknown[], earlierCalls?: Set<string>): ApiError {
  try {
    checkInputStructure(items as Items, { earlierCalls });
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected a 400");
}
const ok = (items: unknown[], earlierCalls?: Set<string>) => expect(() => checkInputStructure(items as Items, { earlierCalls })).not.toThrow();

describe("input structure", () => {
  test("a valid agent turn passes: reasoning, commentary, calls, outputs, answer", () => {
    ok([user("go"), reasoning("rs_1"), said("Looking.", "commentary"), call("call_a"), call("call_b"), output("call_b"), output("call_a"), said("done"), user("thanks")]);
  });

  test("a function_call_output's parts are text or media; anything else is refused, never read as empty text", () => {
    ok([user("go"), call("call_a"), { ...output("call_a"), output: [{ type: "input_text", text: "x" }, { type: "input_image", image_url: "https://x.test/a.png" }] }]);
    const e = refusal([user("go"), call("call_a"), { ...output("call_a"), output: [{ type: "input_video", url: "x" }] }]);
    expect([e.param, e.message]).toEqual(["input.2.output.0.type", "input.2.output.0 has type 'input_video', which a function_call_output cannot carry."]);
    expect(refusal([user("go"), call("call_a"), { ...output("call_a"), output: [{ type: "input_text" }] }]).param).toBe("input.2.output.0.text");
  });

  test("empty input and unsupported roles or item types", () => {
    expect(refusal([]).param).toBe("input");
    expect(() => checkInputStructure("")).toThrow("must not be empty");
    expect(refusal([{ role: "tool", content: "x" }]).param).toBe("input.0.role");
    expect(refusal([{ type: "computer_call" }]).param).toBe("input.0.type");
    expect(refusal([{ role: "user", content: [{ type: "output_text", text: "x" }] }]).param).toBe("input.0.content.0.type");
  });

  test("item ids do not repeat (reasoning ids have their own rule)", () => {
    const e = refusal([{ type: "message", id: "msg_1", role: "user", content: "a" }, { type: "message", id: "msg_1", role: "user", content: "b" }]);
    expect(e.param).toBe("input");
    expect(e.message).toContain("msg_1");
  });

  test("rule 1: a function_call_output must answer a function_call of the request (relaxed with previous_response_id)", () => {
    const e = refusal([user("go"), call("call_a"), output("call_zz")]);
    expect(e.param).toBe("call_id");
    expect(e.message).toContain("call_zz");
    ok([user("go"), output("call_from_before")], new Set(["call_from_before"]));
    // The chain is no blank cheque: a call made nowhere in it is still unmatched.
    expect(refusal([user("go"), output("call_elsewhere")], new Set(["call_from_before"])).param).toBe("call_id");
  });

  test("rule 2: a replayed reasoning item is followed by an assistant message or a function_call", () => {
    expect(refusal([user("go"), reasoning("rs_1"), user("again")]).param).toBe("input");
    expect(refusal([user("go"), reasoning("rs_1")]).message).toContain("without its required following item");
    ok([user("go"), reasoning("rs_1"), reasoning("rs_2"), call("call_a"), output("call_a")]);
  });

  test("rule 3: assistant text right before a function_call carries phase commentary", () => {
    const e = refusal([user("go"), said("Let me check."), call("call_a"), output("call_a")]);
    expect(e.param).toBe("input.1.phase");
    ok([user("go"), said("Let me check.", "commentary"), call("call_a"), output("call_a")]);
  });

  test("rule 4: reasoning ids do not repeat, and the message names the duplicate", () => {
    const e = refusal([user("go"), reasoning("rs_same"), said("a"), reasoning("rs_same"), said("b")]);
    expect(e.param).toBe("input");
    expect(e.message).toContain("rs_same");
  });

  test("rule 5: ids are rs_-prefixed; an id may be left out only when encrypted_content is there", () => {
    const e = refusal([user("go"), reasoning("reasoning_1"), said("a")]);
    expect(e.message).toBe("Invalid reasoning ID format");
    expect(e.param).toBe("input.1.id");
    expect(refusal([user("go"), reasoning(), said("a")]).param).toBe("input.1.id");
    ok([user("go"), reasoning(undefined, "v1.sealed"), said("a")]);
  });

  test("linear: a ~4 MiB input of alternating reasoning and assistant items is read a bounded number of times per item", () => {
    const items: unknown[] = [user("go")];
    const filler = "x".repeat(80);
    for (let k = 0; items.length < 40_000; k++) items.push({ ...reasoning(`rs_${k}`), summary: [{ type: "summary_text", text: filler }] }, said(filler));
    expect(JSON.stringify(items).length).toBeGreaterThan(4_000_000);
    // Every read of an element goes through the proxy; a quadratic check (the rest of the input sliced per reasoning
    // item) would read ~400 million and is stopped at the budget.
    let reads = 0;
    const budget = 16 * items.length;
    const counted = new Proxy(items, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key) && ++reads > budget) throw new Error(`more than ${budget} element reads for ${items.length} items`);
        return Reflect.get(target, key, receiver);
      },
    });
    ok(counted);
    expect(reads).toBeGreaterThan(items.length);
    expect(reads).toBeLessThanOrEqual(budget);
    // The same results: the last reasoning item without its follower is still found.
    expect(refusal([...items, reasoning("rs_last")]).message).toContain("rs_last");
  });
});
