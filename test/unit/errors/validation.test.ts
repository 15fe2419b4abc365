import { describe, expect, test } from "bun:test";
import { issueToApiError, pointerToParam } from "../../../src/errors/validation.ts";

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
