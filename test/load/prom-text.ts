// Reads a server's /metrics scrape (Prometheus text format) for load scenarios: samples, and one series' value by labels.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const LABEL = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?\s*/gy;

function unescape(v: string): string {
  return v.replace(/\\(["\\n])/g, (_, c: string) => (c === "n" ? "\n" : c));
}

function number(raw: string): number {
  if (raw === "+Inf" || raw === "Inf") return Infinity;
  if (raw === "-Inf") return -Infinity;
  return Number(raw);
}

/** Every sample line of a scrape; comments, blank and malformed lines are skipped. */
export function parsePromText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    const m = line.trim().match(LINE);
    if (!m) continue;
    const labels: Record<string, string> = {};
    const body = m[2] ?? "";
    LABEL.lastIndex = 0;
    let lm: RegExpExecArray | null;
    let read = 0;
    while ((lm = LABEL.exec(body))) {
      labels[lm[1]!] = unescape(lm[2]!);
      read = LABEL.lastIndex;
    }
    if (read !== body.length) continue;
    out.push({ name: m[1]!, labels, value: number(m[3]!) });
  }
  return out;
}

/**
 * The sum of the series named `name` whose labels include `labels` (a counter split by other labels adds up), or
 * undefined when the scrape has no such series: the caller prints "n/a" then.
 */
export function seriesValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hits.length ? hits.reduce((n, s) => n + s.value, 0) : undefined;
}

/** How much a counter grew between two scrapes; undefined when either lacks it. */
export function counterDelta(before: readonly Sample[], after: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const a = seriesValue(before, name, labels);
  const b = seriesValue(after, name, labels);
  // A counter first appears with the first event: absent before and present after counts from zero.
  if (b === undefined) return undefined;
  return b - (a ?? 0);
}
