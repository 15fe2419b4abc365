import { describe, expect, test } from "bun:test";
import { escapeHtml, html, raw } from "../../../src/dashboard/html.ts";

describe("the page template", () => {
  test("escapes every interpolated value", () => {
    const name = `<script>alert("x")</script>&'`;
    expect(html`<td>${name}</td>`.text).toBe("<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</td>");
    expect(html`<input value="${`" onfocus="x`}">`.text).toBe(`<input value="&quot; onfocus=&quot;x">`);
  });

  test("nests markup made by the template, joins arrays, drops null, undefined and false", () => {
    const rows = ["a<", "b"].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${rows}</ul>${null}${undefined}${false}${0}`.text).toBe("<ul><li>a&lt;</li><li>b</li></ul>0");
    expect(html`${raw("<b>")}`.text).toBe("<b>");
  });

  test("escapeHtml leaves plain text alone", () => {
    expect(escapeHtml("plain text 123")).toBe("plain text 123");
  });
});
