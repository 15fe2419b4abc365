// kiln's dashboard script: small enhancements of server-rendered pages (each page works without it). Loaded as a
// file from kiln under script-src 'self'; it never uses eval or inline styles.
"use strict";

/** Copy buttons: <button data-copy="id"> copies the text of element #id. */
function setUpCopyButtons() {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const source = document.getElementById(button.dataset.copy);
      if (!source) return;
      const text = source.textContent.trim();
      try {
        await navigator.clipboard.writeText(text);
      } catch {
        // Without the clipboard API (plain HTTP off localhost): select the text so Ctrl+C copies it.
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = "Selected: press Ctrl+C";
        return;
      }
      button.textContent = "Copied";
      setTimeout(() => (button.textContent = "Copy"), 2000);
    });
  }
}

/** Forms with data-confirm ask before they are sent. */
function setUpConfirmations() {
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
}

/**
 * Charts: <div class="chart" data-chart="id"> draws the series of the JSON block <script type="application/json" id="id">
 * ({ x: [unix seconds], series: [{ label, values, unit }] }) with uPlot, when the page loaded it.
 */
function drawCharts() {
  if (typeof window.uPlot !== "function") return;
  for (const box of document.querySelectorAll("[data-chart]")) {
    const source = document.getElementById(box.dataset.chart);
    if (!source) continue;
    const data = JSON.parse(source.textContent);
    const colors = ["#ea580c", "#1d4ed8", "#15803d", "#7c3aed", "#b45309", "#0e7490", "#be185d", "#4b5563"];
    const width = () => Math.max(280, box.clientWidth);
    const options = {
      width: width(),
      height: 220,
      scales: { x: { time: true } },
      series: [{}, ...data.series.map((s, i) => ({ label: s.label, stroke: colors[i % colors.length], width: 2, points: { show: true, size: 5 } }))],
      axes: [{}, { size: 60 }],
      legend: { live: false },
    };
    const plot = new window.uPlot(options, [data.x, ...data.series.map((s) => s.values)], box);
    box.dataset.drawn = "true";
    new ResizeObserver(() => plot.setSize({ width: width(), height: 220 })).observe(box);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  setUpCopyButtons();
  setUpConfirmations();
  drawCharts();
});
