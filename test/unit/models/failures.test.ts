// The fixed public texts of backend failures: status and code per cause, the detail kept off the error, one log line.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ApiError } from "../../../src/errors/api-error.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { errorDetail, type FailureCause, failureError, failureOf, healthText, logRequestFailure, renderFailureError } from "../../../src/models/failures.ts";

const SECRET = "/secret/path/model.onnx: bad\n    at foo (/x/y.ts:1:2)";

describe("backend failures", () => {
  test("each cause has a fixed text, 503 backend_unavailable with Retry-After; a generation failure is a 500", () => {
    const texts: Record<FailureCause, string> = {
      load_failed: "The model 'm-1' could not be loaded; retry later",
      load_timeout: "The model 'm-1' did not load in time; retry later",
      worker_lost: "The model's worker failed; retry the request",
      worker_hung: "The model's worker stopped responding; retry the request",
      worker_restarted: "The model's worker was restarted; retry the request",
      generation_failed: "The model failed while generating; retry the request",
      render_retryable: "The image model produced an unusable image; retry the request",
      render_failed: "The server had an internal error while rendering the image",
      tokenizer_unavailable: "The tokenizer of 'm-1' could not be loaded; retry later",
      tokenizer_timeout: "Tokenizing the prompt took too long; retry the request",
    };
    for (const [cause, text] of Object.entries(texts) as [FailureCause, string][]) {
      // A render's own causes are answered by renderFailureError (the next test).
      if (cause.startsWith("render_")) {
        expect(renderFailureError({ cause, detail: SECRET }, "m-1").message).toBe(text);
        continue;
      }
      const err = failureError({ cause, detail: SECRET }, "m-1");
      expect(err.message).toBe(text);
      if (cause === "generation_failed") expect(err).toMatchObject({ status: 500, type: "server_error", code: null, headers: {} });
      else expect(err).toMatchObject({ status: 503, type: "server_error", code: "backend_unavailable", headers: { "retry-after": "60" } });
    }
  });

  test("the detail stays beside the error: neither its body, its JSON nor its own properties carry it", () => {
    const err = failureError({ cause: "worker_lost", detail: SECRET }, "m-1");
    expect(failureOf(err)).toEqual({ cause: "worker_lost", detail: SECRET });
    for (const shown of [JSON.stringify(err.toBody()), JSON.stringify(err), JSON.stringify(Object.getOwnPropertyDescriptors(err)), String(err)]) {
      expect(shown).not.toContain("/secret/path");
      expect(shown).not.toContain("at foo");
    }
    expect(failureOf(ApiError.internal())).toBeNull();
    expect(failureOf(new Error(SECRET))).toBeNull();
  });

  test("a failed request logs one line with its request id, model, cause and the detail; other errors log nothing", () => {
    const logger = memoryLogger();
    logRequestFailure(logger, failureError({ cause: "worker_hung", detail: SECRET }, "m-1"), "req_1", "m-1");
    logRequestFailure(logger, ApiError.overloaded(), "req_2", "m-1");
    expect(logger.lines).toEqual([{ time: expect.any(String), level: "error", msg: "request failed", request_id: "req_1", model: "m-1", cause: "worker_hung", detail: SECRET }]);
  });

  test("health texts are fixed; a thrown error's detail keeps its stack", () => {
    expect(healthText("load_failed")).toBe("the model could not be loaded");
    expect(healthText("no_worker")).toBe("no worker is running");
    const e = new Error("boom");
    expect(errorDetail(e)).toStartWith("Error: boom\n    at ");
    expect(errorDetail("plain")).toBe("plain");
  });

  test("an image render's failures: retryable ones and lost workers are 503 with no code, others a generic 500, a model nothing serves 503 backend_unavailable", () => {
    for (const cause of ["render_retryable", "worker_lost", "worker_hung", "worker_restarted"] as const) {
      const err = renderFailureError({ cause, detail: SECRET }, "m-1");
      expect(err).toMatchObject({ status: 503, type: "server_error", code: null, headers: { "retry-after": "1" } });
      expect(failureOf(err)).toEqual({ cause, detail: SECRET });
      expect(JSON.stringify(err.toBody())).not.toContain("/secret/path");
    }
    expect(renderFailureError({ cause: "worker_lost", detail: "" }, "m-1").message).toBe("The model's worker failed; retry the request");
    const internal = renderFailureError({ cause: "render_failed", detail: SECRET }, "m-1");
    expect(internal).toMatchObject({ status: 500, type: "server_error", code: null, message: "The server had an internal error while rendering the image" });
    expect(JSON.stringify(internal.toBody())).not.toContain("/secret/path");
    for (const cause of ["load_failed", "load_timeout", "tokenizer_unavailable"] as const) {
      expect(renderFailureError({ cause, detail: "" }, "m-1")).toMatchObject({ status: 503, code: "backend_unavailable" });
    }
  });

  test("the README's table lists every cause with the very text a request gets", () => {
    const readme = readFileSync(join(import.meta.dir, "..", "..", "..", "README.md"), "utf8");
    const causes: FailureCause[] = ["load_failed", "load_timeout", "worker_lost", "worker_hung", "worker_restarted", "generation_failed", "render_retryable", "render_failed", "tokenizer_unavailable", "tokenizer_timeout"];
    for (const cause of causes) {
      const row = readme.split("\n").find((l) => l.startsWith(`| \`${cause}\` |`));
      const error = cause.startsWith("render_") ? renderFailureError({ cause, detail: "" }, "…") : failureError({ cause, detail: "" }, "…");
      expect(row).toContain(`| ${error.message}`);
    }
    for (const cause of ["load_failed", "load_timeout", "worker_lost", "worker_hung", "worker_restarted", "tokenizer_unavailable"] as const) {
      expect(readme.split("\n").find((l) => l.startsWith(`| \`${cause}\` |`))).toContain(`: ${healthText(cause)} |`);
    }
  });
});
