// The usage tab's range: real UTC days only, defaults from today, and the refusals (reversed, too long) with their sentences.
import { describe, expect, test } from "bun:test";
import { addDays, dayToUnix, daysIn, lastDays, MAX_DAYS, parseRange, unixToDay } from "../../../../src/dashboard/tabs/usage-range.ts";

describe("dayToUnix / unixToDay", () => {
  test("a day is the unix second its UTC midnight starts, and back", () => {
    expect(dayToUnix("1970-01-01")).toBe(0);
    expect(dayToUnix("2026-03-01")).toBe(Date.parse("2026-03-01T00:00:00Z") / 1000);
    expect(unixToDay(Date.parse("2026-02-28T23:59:59Z") / 1000)).toBe("2026-02-28");
    expect(unixToDay(Date.parse("2026-03-01T00:00:00Z") / 1000)).toBe("2026-03-01");
  });

  test("text that is not a real day is null", () => {
    for (const bad of ["", "2026-02-30", "2026-13-01", "2026-00-10", "2026-1-01", "26-01-01", "2026/01/01", "2026-01-01T00:00", " 2026-01-01", "2026-01-32"]) {
      expect([bad, dayToUnix(bad)]).toEqual([bad, null]);
    }
    expect(dayToUnix("2024-02-29")).not.toBeNull();
    expect(dayToUnix("2025-02-29")).toBeNull();
  });

  test("a year below 100 stays that year", () => {
    expect(unixToDay(dayToUnix("0050-06-15")!)).toBe("0050-06-15");
  });
});

describe("addDays / daysIn / lastDays", () => {
  test("moves across month and year ends", () => {
    expect(addDays("2026-01-31", 1)).toBe("2026-02-01");
    expect(addDays("2024-03-01", -1)).toBe("2024-02-29");
    expect(addDays("2026-01-01", -1)).toBe("2025-12-31");
  });

  test("counts both ends", () => {
    expect(daysIn({ from: "2026-01-30", to: "2026-02-02" })).toBe(4);
    expect(daysIn({ from: "2026-05-05", to: "2026-05-05" })).toBe(1);
  });

  test("the last 30 days end today and start 29 days before", () => {
    expect(lastDays("2026-03-10")).toEqual({ from: "2026-02-09", to: "2026-03-10" });
    expect(daysIn(lastDays("2026-03-10"))).toBe(30);
    expect(lastDays("2026-03-10", 7)).toEqual({ from: "2026-03-04", to: "2026-03-10" });
  });
});

describe("parseRange", () => {
  const today = "2026-11-27";

  test("nothing asked: the last 30 UTC days ending today", () => {
    expect(parseRange(null, null, today)).toEqual({ ok: true, range: { from: "2026-10-29", to: today } });
    expect(parseRange("", "  ", today)).toEqual({ ok: true, range: { from: "2026-10-29", to: today } });
  });

  test("one end asked: the other is today, or 30 days before the end", () => {
    expect(parseRange("2026-11-01", null, today)).toEqual({ ok: true, range: { from: "2026-11-01", to: today } });
    expect(parseRange(null, "2026-02-10", today)).toEqual({ ok: true, range: { from: "2026-01-12", to: "2026-02-10" } });
  });

  test("both ends asked, one day, and exactly the longest range", () => {
    expect(parseRange("2026-01-30", "2026-02-02", today)).toEqual({ ok: true, range: { from: "2026-01-30", to: "2026-02-02" } });
    expect(parseRange("2026-05-05", "2026-05-05", today)).toEqual({ ok: true, range: { from: "2026-05-05", to: "2026-05-05" } });
    const longest = parseRange("2024-01-01", "2024-12-31", today);
    expect(longest.ok && daysIn(longest.range)).toBe(MAX_DAYS);
  });

  test("a date that is not one is refused, naming it, and what was typed is kept", () => {
    expect(parseRange("2026-02-30", "2026-03-05", today)).toEqual({
      ok: false, error: 'The start date "2026-02-30" is not a date: use YYYY-MM-DD, such as 2026-11-27.', from: "2026-02-30", to: "2026-03-05",
    });
    const r = parseRange("2026-01-01", "tomorrow", today);
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.error, r.from, r.to]).toEqual(['The end date "tomorrow" is not a date: use YYYY-MM-DD, such as 2026-11-27.', "2026-01-01", "tomorrow"]);
  });

  test("a very long typed value is cut in the message", () => {
    const r = parseRange("x".repeat(5000), null, today);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.length).toBeLessThan(120);
  });

  test("a start after the end is refused", () => {
    expect(parseRange("2026-03-02", "2026-03-01", today)).toEqual({
      ok: false, error: "The start date (2026-03-02) is after the end date (2026-03-01): choose a start on or before the end.", from: "2026-03-02", to: "2026-03-01",
    });
    // Only a start, in the future: it is after today, the end.
    expect(parseRange("2027-01-01", null, today).ok).toBe(false);
  });

  test("more than 366 days is refused, saying how many", () => {
    expect(parseRange("2024-01-01", "2025-01-01", today)).toEqual({
      ok: false, error: "That range covers 367 days; the usage tab shows at most 366 days at a time. Choose a shorter range.", from: "2024-01-01", to: "2025-01-01",
    });
    expect(parseRange("1970-01-01", "9999-12-31", today).ok).toBe(false);
  });
});
