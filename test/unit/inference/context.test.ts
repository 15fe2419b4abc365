import { describe, expect, test } from "bun:test";
import { fitContext } from "../../../src/inference/context.ts";

describe("fitContext", () => {
  test("fits, or fills the rest of the window when no output size is asked", () => {
    expect(fitContext(100, 50, 4096)).toBe(50);
    expect(fitContext(100, null, 4096)).toBe(3996);
  });

  test("overflow gives the spec's 400 with all three numbers, param and code null", () => {
    try {
      fitContext(4000, 200, 4096);
      throw new Error("no error");
    } catch (e) {
      const body = (e as { toBody(): { error: Record<string, unknown> } }).toBody();
      expect((e as { status: number }).status).toBe(400);
      expect(body.error.param).toBeNull();
      expect(body.error.code).toBeNull();
      expect(body.error.type).toBe("invalid_request_error");
      expect(body.error.message).toContain("maximum context length is 4096 tokens");
      expect(body.error.message).toContain("4000 in the input, 200 in the output");
    }
    expect(() => fitContext(4096, null, 4096)).toThrow("4096 in the input, 1 in the output");
  });
});
