// The Limits & billing tab's pure parts: the credit form, tier choices, switches, the ledger cursor and limit use.
import { fmtLimit } from "../../../src/dashboard/format.ts";
import { describe, expect, test } from "bun:test";
import {
  describeUse, ledgerPage, MAX_NOTE, parseBefore, parseCreditForm, parseSwitch, parseTierChoice, tierChoices,
} from "../../../src/dashboard/tabs/billing-parts.ts";

describe("parseCreditForm", () => {
  test("an amount becomes exact micro-units; the note is trimmed and empty means none", () => {
    expect(parseCreditForm({ amount: "12.50", note: "  invoice 7 " })).toEqual({ ok: true, value: { micros: 12_500_000, note: "invoice 7" } });
    expect(parseCreditForm({ amount: " 0.000001", note: "" })).toEqual({ ok: true, value: { micros: 1, note: null } });
    expect(parseCreditForm({ amount: "25", note: "   " })).toEqual({ ok: true, value: { micros: 25_000_000, note: null } });
  });

  test("a bad amount gives parseAmount's message as a sentence, naming what was typed", () => {
    for (const amount of ["abc", "-1", "1e3", "", "1.1234567", "12,50"]) {
      const r = parseCreditForm({ amount, note: "" });
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error).toStartWith("An amount is a positive number with at most 6 decimals");
        expect(r.error).toContain(`"${amount}"`);
        expect(r.error).toEndWith(".");
      }
    }
    const zero = parseCreditForm({ amount: "0", note: "" });
    expect(zero).toEqual({ ok: false, error: 'An amount must be above 0 and at most 1000000000, got "0".' });
    expect(parseCreditForm({ amount: "1000000001", note: "" }).ok).toBe(false);
  });

  test("a note has at most 200 characters and no control characters", () => {
    expect(parseCreditForm({ amount: "1", note: "x".repeat(MAX_NOTE) }).ok).toBe(true);
    expect(parseCreditForm({ amount: "1", note: "x".repeat(MAX_NOTE + 1) })).toEqual({ ok: false, error: "A note has at most 200 characters (this one has 201)." });
    expect(parseCreditForm({ amount: "1", note: "a\u0007b" })).toEqual({ ok: false, error: "A note cannot contain control characters." });
  });
});

describe("tiers", () => {
  const config = [{ name: "pro", rpm: 600, tpm: 2_000_000 }, { name: "free", rpm: 20, tpm: null }];
  const db = [{ name: "pro", rpm: 900, tpm: null }, { name: "enterprise", rpm: null, tpm: null }];

  test("choices merge config and database tiers by name, the database winning, sorted", () => {
    expect(tierChoices(config, db)).toEqual([
      { name: "enterprise", rpm: null, tpm: null },
      { name: "free", rpm: 20, tpm: null },
      { name: "pro", rpm: 900, tpm: null },
    ]);
    expect(tierChoices([], [])).toEqual([]);
  });

  test("a choice is none (null) or a known tier; anything else is refused with a message", () => {
    const known = tierChoices(config, db);
    expect(parseTierChoice("none", known)).toEqual({ ok: true, value: null });
    expect(parseTierChoice(" free ", known)).toEqual({ ok: true, value: "free" });
    expect(parseTierChoice("", known)).toEqual({ ok: false, error: 'Choose a tier, or "none".' });
    const unknown = parseTierChoice("gold", known);
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.error).toStartWith('There is no tier "gold".');
    const long = parseTierChoice("g".repeat(500), known);
    expect(long.ok).toBe(false);
    if (!long.ok) expect(long.error.length).toBeLessThan(200);
  });
});

test("fmtLimit writes a limit with thousands separators, or unlimited", () => {
  expect([fmtLimit(null), fmtLimit(20), fmtLimit(2_000_000)]).toEqual(["unlimited", "20", "2,000,000"]);
});

test("parseSwitch takes exactly its two values", () => {
  expect(parseSwitch("on", "on", "off")).toBe(true);
  expect(parseSwitch("off", "on", "off")).toBe(false);
  for (const raw of [null, "", "ON", "yes"]) expect(parseSwitch(raw, "on", "off")).toBeNull();
});

describe("the ledger's pages", () => {
  test("before: absent is the newest page; a positive id pages back; anything else is refused", () => {
    expect(parseBefore(undefined)).toEqual({ ok: true, value: null });
    expect(parseBefore("")).toEqual({ ok: true, value: null });
    expect(parseBefore("42")).toEqual({ ok: true, value: 42 });
    for (const raw of ["0", "-1", "abc", "1.5", "1".repeat(13)]) expect(parseBefore(raw).ok).toBe(false);
  });

  test("one row past the page means an older page, starting before the page's last id", () => {
    const rows = (ids: number[]) => ids.map((id) => ({ id }));
    expect(ledgerPage(rows([9, 8, 7, 6]), 3)).toEqual({ rows: rows([9, 8, 7]), olderBefore: 7 });
    expect(ledgerPage(rows([9, 8, 7]), 3)).toEqual({ rows: rows([9, 8, 7]), olderBefore: null });
    expect(ledgerPage(rows([]), 3)).toEqual({ rows: [], olderBefore: null });
  });
});

describe("describeUse", () => {
  test("no limit reads as unlimited", () => {
    expect(describeUse(null, undefined, "requests")).toEqual({ unlimited: true, text: "Unlimited" });
  });

  test("used is the limit less what remains, with a level and when the bucket is full again", () => {
    expect(describeUse(60, { limit: 60, remaining: 60, resetMs: 0 }, "requests")).toEqual({
      unlimited: false, used: 0, limit: 60, level: "good", text: "0 of 60 requests used", reset: "Full",
    });
    const some = describeUse(2_000_000, { limit: 2_000_000, remaining: 500_000, resetMs: 45_000 }, "tokens");
    expect(some).toEqual({ unlimited: false, used: 1_500_000, limit: 2_000_000, level: "warn", text: "1,500,000 of 2,000,000 tokens used", reset: "Full again in 45s" });
    expect(describeUse(10, { limit: 10, remaining: 1, resetMs: 54_000 }, "requests")).toMatchObject({ used: 9, level: "bad" });
  });

  test("a bucket in debt reads as all used, never more; a missing bucket as none used", () => {
    expect(describeUse(10, { limit: 10, remaining: 0, resetMs: 90_000 }, "tokens")).toMatchObject({ used: 10, level: "bad", reset: "Full again in 1m30s" });
    expect(describeUse(10, undefined, "requests")).toMatchObject({ used: 0, limit: 10, reset: "Full" });
  });
});
