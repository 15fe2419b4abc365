import { describe, expect, test } from "bun:test";
import {
  incidentIdOf, incidentUpdateOf, incidentUpdateProblem, MAX_MESSAGE, MAX_TITLE, messageProblem, newIncidentOf, newIncidentProblem, OPEN_STATUSES, titleProblem,
} from "../../../src/dashboard/tabs/incident-form.ts";

const form = (fields: Record<string, string>) => new URLSearchParams(fields);

describe("incident forms", () => {
  test("what was typed: trimmed, CRLF line ends of a textarea kept as newlines", () => {
    expect(newIncidentOf(form({ title: "  Slow chat ", message: " line 1\r\nline 2\rline 3 ", status: "identified", impact: "outage" }))).toEqual({
      title: "Slow chat", message: "line 1\nline 2\nline 3", status: "identified", impact: "outage",
    });
    expect(newIncidentOf(form({}))).toEqual({ title: "", message: "", status: "", impact: "" });
    expect(incidentUpdateOf(form({ status: "monitoring", message: "ok\r\n" }))).toEqual({ status: "monitoring", message: "ok" });
  });

  test("a title is required, at most 200 characters, one line", () => {
    expect(titleProblem("")).toMatch(/Give the incident a title/);
    expect(titleProblem("x".repeat(MAX_TITLE))).toBeNull();
    expect(titleProblem("x".repeat(MAX_TITLE + 1))).toBe("A title has at most 200 characters (this one has 201).");
    expect(titleProblem("two\nlines")).toMatch(/one line/);
    expect(titleProblem("bell\u0007")).toMatch(/control characters/);
    expect(titleProblem("Ünïcode ✓ <b>")).toBeNull();
  });

  test("a message is optional, at most 2000 characters, line breaks and tabs allowed", () => {
    expect(messageProblem("")).toBeNull();
    expect(messageProblem("a\n\tb")).toBeNull();
    expect(messageProblem("x".repeat(MAX_MESSAGE))).toBeNull();
    expect(messageProblem("x".repeat(MAX_MESSAGE + 1))).toMatch(/at most 2000 characters/);
    expect(messageProblem("nul\u0000")).toMatch(/control characters/);
  });

  test("status: one of the open statuses (resolving is its own form); impact: degraded or outage", () => {
    expect(OPEN_STATUSES).toEqual(["investigating", "identified", "monitoring"]);
    const ok = { title: "t", message: "", status: "investigating", impact: "degraded" };
    expect(newIncidentProblem(ok)).toBeNull();
    expect(newIncidentProblem({ ...ok, status: "resolved" })).toMatch(/^Choose a status: investigating, identified, monitoring/);
    expect(newIncidentProblem({ ...ok, impact: "operational" })).toBe("Choose an impact: degraded or outage.");
    // The first problem is the one shown.
    expect(newIncidentProblem({ title: "", message: "", status: "x", impact: "y" })).toMatch(/title/);
    expect(incidentUpdateProblem({ status: "monitoring", message: "" })).toBeNull();
    expect(incidentUpdateProblem({ status: "resolved", message: "" })).toMatch(/Resolve button/);
  });

  test("an incident id in a URL is a positive whole number", () => {
    expect(incidentIdOf("12")).toBe(12);
    for (const bad of [undefined, "", "0", "-1", "1.5", "1e3", "abc", "0012", "9".repeat(13)]) expect(incidentIdOf(bad)).toBeNull();
  });
});
