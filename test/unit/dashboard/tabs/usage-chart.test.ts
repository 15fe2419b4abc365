// A usage chart's JSON data block: whatever a model is called, it cannot end the script element or open a comment,
// and the browser's JSON.parse of the element's text gives back the same data.
import { describe, expect, test } from "bun:test";
import { chartCard, jsonForScript } from "../../../../src/dashboard/tabs/usage-chart.ts";

const HOSTILE = ["</script><script>alert(1)</script>", "<!--", "<!-- <script>", "a & b > c", "\u2028\u2029", "</SCRIPT >", '"quoted"'];

describe("jsonForScript", () => {
  test("no < or > is left, and it parses back to the same value", () => {
    const value = { x: [0, 86400], series: HOSTILE.map((label) => ({ label, values: [1, 2] })) };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  test("plain data is plain JSON", () => {
    expect(jsonForScript({ a: [1, "b"] })).toBe('{"a":[1,"b"]}');
  });
});

describe("chartCard", () => {
  test("one script element whose text is the data, next to the box naming it", () => {
    const data = { x: [0], series: HOSTILE.map((label) => ({ label, values: [3] })) };
    const out = chartCard("chart-requests", "Requests per day", "Requests per UTC day", data).text;
    expect(out).toContain('<div class="chart" id="chart-requests" data-chart="chart-requests-data"');
    expect(out.match(/<script/gi)).toHaveLength(1);
    expect(out.match(/<\/script/gi)).toHaveLength(1);
    expect(out).not.toContain("<!--");
    const inner = /<script type="application\/json" id="chart-requests-data">([^<]*)<\/script>/.exec(out)?.[1];
    expect(JSON.parse(inner!)).toEqual(data);
  });
});
