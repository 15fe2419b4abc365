import { describe, expect, test } from "bun:test";
import { deepestIssue, issueToApiError, pointerToParam, type SchemaIssue } from "../../../src/errors/validation.ts";

describe("validation errors", () => {
  test("pointer to dotted param", () => {
    expect(pointerToParam("/messages/0/content")).toBe("messages.0.content");
    expect(pointerToParam("/a~1b")).toBe("a/b");
    expect(pointerToParam("")).toBeNull();
  });

  test("missing required field", () => {
    const e = issueToApiError({ path: "/model", message: "Expected required property", value: undefined });
    expect(e.status).toBe(400);
    expect(e.toBody()).toEqual({
      error: { message: "Missing required parameter: 'model'.", type: "invalid_request_error", param: "model", code: null },
    });
  });

  test("wrong value, and a schema's own message wins", () => {
    expect(issueToApiError({ path: "/messages/0/content", message: "Expected string", value: 5 }).toBody().error).toMatchObject({
      param: "messages.0.content",
      message: "Invalid value for 'messages.0.content': expected string.",
    });
    expect(issueToApiError({ path: "/top_p", message: "x", value: 0, schema: { error: "top_p must be > 0 and ≤ 1" } }).message).toBe(
      "top_p must be > 0 and ≤ 1",
    );
  });
});

describe("deepestIssue (issue 40: input errors name the item)", () => {
  const variant = (first: SchemaIssue | undefined) => ({ First: () => first });
  test("a union that failed on an array is reported where its best variant failed deepest", () => {
    const inner: SchemaIssue = { path: "/input/3/content", message: "Expected union value", value: 5, errors: [variant({ path: "/input/3/content", message: "Expected string", value: 5 })] };
    const issue: SchemaIssue = { path: "/input", message: "Expected union value", value: [{}], schema: { error: "input must be a string or an array of input items" }, errors: [variant({ path: "/input", message: "Expected string", value: [{}] }), variant(inner)] };
    expect(deepestIssue(issue)).toBe(inner);
    expect(issueToApiError(issue).toBody().error.param).toBe("input.3.content");
  });

  test("on anything but an array the union's own message stays", () => {
    const issue: SchemaIssue = { path: "/response_format", message: "Expected union value", value: { type: "xml" }, schema: { error: "response_format must be …" }, errors: [variant({ path: "/response_format/type", message: "Expected 'text'", value: "xml" })] };
    expect(issueToApiError(issue).toBody().error).toMatchObject({ param: "response_format", message: "response_format must be …" });
  });
});

test("a union without its own message names the forms it takes", () => {
  const schema = { anyOf: [{ anyOf: [{ type: "string" }, { type: "array" }] }, { type: "null" }] };
  expect(issueToApiError({ path: "/input/1/content", message: "Expected union value", value: 5, schema }).message).toBe("Invalid value for 'input.1.content': expected string, array or null.");
});
