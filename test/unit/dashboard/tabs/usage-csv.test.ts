// The usage CSV: formula-looking cells made plain text, RFC 4180 quoting, the rows as `kiln usage` has them, a safe file name.
import { describe, expect, test } from "bun:test";
import { csvCell, csvFilename, usageCsv } from "../../../../src/dashboard/tabs/usage-csv.ts";

describe("csvCell", () => {
  test("a cell that a spreadsheet would run as a formula starts with an apostrophe", () => {
    expect(csvCell("=1+1")).toBe("'=1+1");
    expect(csvCell("+1")).toBe("'+1");
    expect(csvCell("-2")).toBe("'-2");
    expect(csvCell("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvCell("\tx")).toBe("'\tx");
    // A leading CR also needs quotes, the apostrophe inside them.
    expect(csvCell("\r=x")).toBe("\"'\r=x\"");
  });

  test("other cells are as they are, numbers too", () => {
    expect(csvCell("model-a=b")).toBe("model-a=b");
    expect(csvCell(" =x")).toBe(" =x");
    expect(csvCell(12)).toBe("12");
    expect(csvCell("")).toBe("");
  });

  test("a comma, quote or line break is quoted, quotes doubled", () => {
    expect(csvCell("a,b")).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell("two\nlines")).toBe('"two\nlines"');
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
  });
});

describe("usageCsv", () => {
  test("a header and one CRLF line per row, cost both in micro-units and as money", () => {
    const text = usageCsv([
      { day: "2026-01-31", team: "acme, inc", model: "m1", serviceTier: "default", requests: 3, inputTokens: 100, cachedTokens: 48, outputTokens: 40, images: 0, costMicros: 1_500_000 },
      { day: "2026-02-01", team: "acme, inc", model: "=cmd|' /C calc'!A0", serviceTier: "batch", requests: 1, inputTokens: 2, cachedTokens: 0, outputTokens: 3, images: 4, costMicros: 7 },
    ]);
    expect(text).toBe([
      "day,team,model,service_tier,requests,input_tokens,cached_tokens,output_tokens,images,cost_micros,cost",
      '2026-01-31,"acme, inc",m1,default,3,100,48,40,0,1500000,1.50',
      "2026-02-01,\"acme, inc\",'=cmd|' /C calc'!A0,batch,1,2,0,3,4,7,0.000007",
      "",
    ].join("\r\n"));
  });

  test("no rows: the header alone", () => {
    expect(usageCsv([])).toBe("day,team,model,service_tier,requests,input_tokens,cached_tokens,output_tokens,images,cost_micros,cost\r\n");
  });
});

describe("csvFilename", () => {
  const r = { from: "2026-01-30", to: "2026-02-02" };

  test("names the team and the range", () => {
    expect(csvFilename("test-team", 1, r)).toBe("kiln-usage-test-team-2026-01-30-to-2026-02-02.csv");
  });

  test("a name with quotes, slashes, spaces or other scripts keeps only safe characters", () => {
    expect(csvFilename('Acme "R&D"/ops', 1, r)).toBe("kiln-usage-Acme-R-D-ops-2026-01-30-to-2026-02-02.csv");
    expect(csvFilename("../..", 1, r)).toBe("kiln-usage-team-1-2026-01-30-to-2026-02-02.csv");
    expect(csvFilename("チーム", 42, r)).toBe("kiln-usage-team-42-2026-01-30-to-2026-02-02.csv");
    expect(csvFilename("x".repeat(500), 1, r)).toBe(`kiln-usage-${"x".repeat(60)}-2026-01-30-to-2026-02-02.csv`);
  });
});
