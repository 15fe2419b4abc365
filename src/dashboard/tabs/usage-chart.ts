// A chart of the usage tab as dashboard.js draws it: a box naming a JSON data block, and the block itself. The data
// holds model names, so the JSON is written so that nothing in it can end the <script> element or open a comment.
import { type Html, html, raw } from "../html.ts";
import type { ChartData } from "./usage-series.ts";

/**
 * JSON for the inside of a <script type="application/json"> element: `<` `>` `&` (and the JS line separators) are
 * written as \u escapes, which JSON.parse reads back as the same characters, so `</script>` or `<!--` never appears.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** A titled chart card: `<div data-chart="ID">` plus the JSON block `#ID`, drawn by dashboard.js when uPlot loaded. */
export function chartCard(id: string, title: string, summary: string, data: ChartData): Html {
  // raw() is safe here: jsonForScript leaves no `<` in the text, so it cannot leave the script element.
  return html`<section class="card chart-card" aria-labelledby="${id}-title">
  <h2 id="${id}-title">${title}</h2>
  <div class="chart" id="${id}" data-chart="${id}-data" role="img" aria-label="${summary}"></div>
  <script type="application/json" id="${id}-data">${raw(jsonForScript(data))}</script>
</section>`;
}
