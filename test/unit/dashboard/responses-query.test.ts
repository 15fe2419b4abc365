// The Responses tab's list filters: parsed from the URL's query, problems named, and written back into links.
import { describe, expect, test } from "bun:test";
import { formatCursor, listHref, parseCursor, parseListFilter, statusLabel, statusTone } from "../../../src/dashboard/tabs/responses-query.ts";

describe("parseListFilter", () => {
  test("no query is no filter", () => {
    expect(parseListFilter({})).toEqual({ filter: { status: null, backgroundOnly: false, before: null } });
  });

  test("the form's fields: a status, the ticked box, the empty 'All'", () => {
    expect(parseListFilter({ status: "in_progress", background: "1" })).toEqual({ filter: { status: "in_progress", backgroundOnly: true, before: null } });
    expect(parseListFilter({ status: "", background: "" })).toEqual({ filter: { status: null, backgroundOnly: false, before: null } });
  });

  test("an unknown status or background value is a problem naming what is allowed", () => {
    const bad = parseListFilter({ status: "done" });
    expect("problem" in bad && bad.problem).toContain('"done" is not a response status');
    expect("problem" in bad && bad.problem).toContain("queued, in_progress, completed, incomplete, failed, cancelled");
    expect("problem" in parseListFilter({ background: "yes" })).toBe(true);
  });

  test("a cursor is read back; a damaged one is a problem", () => {
    expect(parseListFilter({ before: "1700000000.resp_abc" })).toEqual({ filter: { status: null, backgroundOnly: false, before: { createdAt: 1700000000, id: "resp_abc" } } });
    for (const before of ["1700000000", "x.resp_a", "1.resp a", "1.", `1.${"a".repeat(201)}`]) expect("problem" in parseListFilter({ before })).toBe(true);
  });
});

describe("cursor and links", () => {
  test("a cursor survives the round trip", () => {
    const c = { createdAt: 1712345678, id: "resp_0123456789abcdef" };
    expect(parseCursor(formatCursor(c))).toEqual(c);
    expect(parseCursor("12.a.b")).toBeNull();
  });

  test("links carry only the filters that are set, and parse back to the same filter", () => {
    expect(listHref(7, { status: null, backgroundOnly: false, before: null })).toBe("/dashboard/teams/7/responses");
    const f = { status: "failed" as const, backgroundOnly: true, before: { createdAt: 5, id: "resp_x" } };
    const href = listHref(7, f);
    expect(href).toBe("/dashboard/teams/7/responses?status=failed&background=1&before=5.resp_x");
    expect(parseListFilter(Object.fromEntries(new URL(href, "http://x").searchParams))).toEqual({ filter: f });
  });
});

describe("status words", () => {
  test("tones: completed good, incomplete and cancelled warn, failed bad, waiting and running plain", () => {
    expect(["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"].map(statusTone)).toEqual([null, null, "good", "warn", "bad", "warn"]);
    expect(statusLabel("in_progress")).toBe("in progress");
  });
});
