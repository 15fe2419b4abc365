// The Batch API's pure parts: parsing and checking an input file, a line's outcome from its run, the output and error
// files from the line rows, when a running batch stops, and the line slots.
import { describe, expect, test } from "bun:test";
import { outputFiles } from "../../../src/api/batches/finalize.ts";
import { lineIds, lineOutcome, MAX_RETRY_MS } from "../../../src/api/batches/line-outcome.ts";
import { stopOf } from "../../../src/api/batches/run-batch.ts";
import { lineSlots } from "../../../src/api/batches/slots.ts";
import { MAX_BATCH_LINES, parseBatchInput } from "../../../src/api/batches/validate.ts";
import type { BatchRow } from "../../../src/db/batches-repo.ts";
import { ApiError } from "../../../src/errors/api-error.ts";

const CHAT = "/v1/chat/completions";
const ok = () => null;
const line = (custom_id: string, body: unknown = { model: "m", messages: [] }, url = CHAT) => JSON.stringify({ custom_id, method: "POST", url, body });

describe("parseBatchInput", () => {
  test("good lines in order, blank lines skipped but counted", () => {
    const r = parseBatchInput(`${line("a")}\n\n${line("b")}\n`, CHAT, ok);
    expect(r).toEqual({ ok: true, lines: [{ line: 1, customId: "a", bodyJson: '{"model":"m","messages":[]}' }, { line: 3, customId: "b", bodyJson: '{"model":"m","messages":[]}' }] });
  });

  test("each kind of bad line is named by its 1-based line, code and param", () => {
    const text = [
      line("a"),
      "{not json",
      line("a"),
      line("c", {}, "/v1/embeddings"),
      JSON.stringify({ custom_id: "d", method: "GET", url: CHAT, body: {} }),
      line("e", { model: "m", stream: true }),
      JSON.stringify({ method: "POST", url: CHAT, body: {} }),
      line("f", { bad: 1 }),
    ].join("\n");
    const check = (b: Record<string, unknown>) => ("bad" in b ? ApiError.badRequest("Missing required parameter: 'model'.", "model") : null);
    const r = parseBatchInput(text, CHAT, check);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map((e) => [e.line, e.code, e.param])).toEqual([
      [2, "invalid_json_line", null],
      [3, "duplicate_custom_id", "custom_id"],
      [4, "invalid_url", "url"],
      [5, "invalid_request", "method"],
      [6, "invalid_request", "body.stream"],
      [7, "missing_required_parameter", "custom_id"],
      [8, "invalid_request", "body.model"],
    ]);
    expect(r.errors[6]!.message).toBe("Missing required parameter: 'model'.");
    expect(r.errors[2]!.message).toContain("'/v1/embeddings' does not match the batch's endpoint '/v1/chat/completions'");
  });

  test("an empty file and one past the line limit are refused", () => {
    expect(parseBatchInput("\n\n", CHAT, ok)).toEqual({ ok: false, errors: [{ line: null, code: "empty_file", message: "The input file has no requests.", param: null }] });
    const many = Array.from({ length: MAX_BATCH_LINES + 1 }, (_, i) => line(`c${i}`)).join("\n");
    const r = parseBatchInput(many, CHAT, ok);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual([{ line: MAX_BATCH_LINES + 1, code: "too_many_requests", message: expect.stringContaining("at most 50000 requests"), param: null }]);
  });
});

describe("lineOutcome", () => {
  const ids = lineIds("batch_x", 7);
  test("ids are derived from the batch and the line: the same on every run", () => {
    expect(lineIds("batch_x", 7)).toEqual(ids);
    expect(ids.requestId).toMatch(/^req_[0-9a-f]{32}$/);
    expect(ids.id).toBe(`batch_req_${ids.requestId.slice(4)}`);
    expect(lineIds("batch_x", 8).requestId).not.toBe(ids.requestId);
  });

  test("an answer is done; a refusal is failed with the endpoint's error body", () => {
    expect(lineOutcome({ answer: { x: 1 } }, ids, "c", false)).toEqual({ kind: "done", result: { id: ids.id, custom_id: "c", response: { status_code: 200, request_id: ids.requestId, body: { x: 1 } }, error: null } });
    const err = ApiError.modelNotFound("nope");
    expect(lineOutcome({ error: err }, ids, "c", false)).toEqual({ kind: "failed", result: { id: ids.id, custom_id: "c", response: { status_code: 404, request_id: ids.requestId, body: err.toBody() }, error: null } });
  });

  test("a rate limit or a full queue waits (bounded by Retry-After); a drain or a stop puts the line back", () => {
    const limited = new ApiError(429, "rate_limit_error", "slow down", "rate_limit_exceeded", null, { "retry-after-ms": "1500" });
    expect(lineOutcome({ error: limited }, ids, "c", false)).toEqual({ kind: "retry", afterMs: 1500 });
    expect(lineOutcome({ error: ApiError.overloaded() }, ids, "c", false)).toEqual({ kind: "retry", afterMs: MAX_RETRY_MS });
    expect(lineOutcome({ error: ApiError.shuttingDown() }, ids, "c", false)).toEqual({ kind: "release" });
    expect(lineOutcome({ error: ApiError.badRequest("x") }, ids, "c", true)).toEqual({ kind: "release" });
  });
});

describe("outputFiles", () => {
  const rows = [
    { line: 1, customId: "a", status: "done", resultJson: '{"ok":1}' },
    { line: 2, customId: "b", status: "failed", resultJson: '{"bad":2}' },
    { line: 3, customId: "c", status: "pending", resultJson: null },
  ];
  test("done lines to the output, failed ones to the errors, in input order", () => {
    expect(outputFiles("batch_x", rows.slice(0, 2), "completed")).toEqual({ output: '{"ok":1}\n', errors: '{"bad":2}\n' });
  });
  test("a cancelled or expired batch lists its unrun lines with the reason", () => {
    const { errors } = outputFiles("batch_x", rows, "expired");
    const unrun = JSON.parse(errors.trim().split("\n")[1]!);
    expect(unrun).toEqual({ id: lineIds("batch_x", 3).id, custom_id: "c", response: null, error: { code: "batch_expired", message: expect.any(String) } });
    expect(JSON.parse(outputFiles("batch_x", rows, "cancelled").errors.trim().split("\n")[1]!).error.code).toBe("batch_cancelled");
  });
});

describe("stopOf", () => {
  const row = { leaseOwner: "me", leaseEpoch: 2, status: "in_progress", expiresAt: 1000 } as BatchRow;
  const held = { owner: "me", epoch: 2 };
  test("runs on while held, in progress and within its window", () => expect(stopOf(row, held, 999, false)).toBeNull());
  test("lost when another replica claimed it", () => expect(stopOf({ ...row, leaseEpoch: 3 }, held, 0, false)).toBe("lost"));
  test("cancel, expiry (not while finalizing), drain", () => {
    expect(stopOf({ ...row, status: "cancelling" }, held, 0, false)).toBe("cancel");
    expect(stopOf(row, held, 1000, false)).toBe("expire");
    expect(stopOf({ ...row, status: "finalizing" }, held, 1000, false)).toBeNull();
    expect(stopOf(row, held, 0, true)).toBe("drain");
  });
});

test("line slots: a quarter of the queue, from 1 to 64", () => {
  expect([lineSlots(1), lineSlots(40), lineSlots(256), lineSlots(10_000)]).toEqual([1, 10, 64, 64]);
});
