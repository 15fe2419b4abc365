// A strict parser of the Prometheus text exposition format (0.0.4), written for the tests: it throws on anything a
// Prometheus server would refuse or misread (bad names, escapes or values, a sample before its TYPE, a family split
// in two, duplicate series, histogram buckets that are not cumulative or disagree with _count).

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);
const SUFFIXES: Record<MetricType, string[]> = {
  counter: ["", "_total", "_created"],
  gauge: [""],
  histogram: ["_bucket", "_sum", "_count", "_created"],
  summary: ["", "_sum", "_count", "_created"],
  untyped: [""],
};

/** Values as Prometheus reads them (Go's ParseFloat: NaN and Inf in any letter case). */
function parseValue(raw: string, line: number): number {
  const word = raw.toLowerCase();
  if (word === "+inf" || word === "inf") return Infinity;
  if (word === "-inf") return -Infinity;
  if (word === "nan") return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(raw)) throw new Error(`line ${line}: bad value "${raw}"`);
  return Number(raw);
}

/** Reads `{a="x",b="y"}` starting at `i` (the brace); returns the labels and the index after the closing brace. */
function parseLabels(text: string, i: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  i++;
  while (true) {
    if (text[i] === "}") return { labels, end: i + 1 };
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`line ${line}: label without '='`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`line ${line}: bad label name "${name}"`);
    if (name in labels) throw new Error(`line ${line}: label "${name}" twice`);
    if (text[eq + 1] !== '"') throw new Error(`line ${line}: label value not quoted`);
    let value = "";
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === "\\") {
        const esc = text[++j];
        if (esc === "\\") value += "\\";
        else if (esc === '"') value += '"';
        else if (esc === "n") value += "\n";
        else throw new Error(`line ${line}: bad escape "\\${esc}" in a label value`);
      } else value += text[j];
    }
    if (j >= text.length) throw new Error(`line ${line}: unterminated label value`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ",") i++;
    else if (text[i] !== "}") throw new Error(`line ${line}: expected ',' or '}' after a label`);
  }
}

function familyOf(families: Map<string, Family>, sample: string): Family | undefined {
  for (const [name, f] of families) for (const s of SUFFIXES[f.type]) if (sample === name + s) return f;
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  if (text.length && !text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families = new Map<string, Family>();
  const closed = new Set<string>();
  let current: Family | null = null;
  const seen = new Set<string>();
  const lines = text.split("\n");
  lines.pop();
  lines.forEach((raw, idx) => {
    const line = idx + 1;
    if (raw.trim() === "") return;
    if (raw.startsWith("#")) {
      const m = raw.match(/^# (HELP|TYPE) (\S+)(?: (.*))?$/);
      if (!m) return; // a plain comment
      const [, kind, name, rest = ""] = m;
      if (!METRIC_NAME.test(name!)) throw new Error(`line ${line}: bad metric name "${name}"`);
      if (closed.has(name!)) throw new Error(`line ${line}: family ${name} split in two`);
      let f = families.get(name!);
      if (!f) {
        if (current) closed.add(current.name);
        f = { name: name!, type: "untyped", help: "", samples: [] };
        families.set(name!, f);
        current = f;
      }
      if (kind === "TYPE") {
        if (!TYPES.has(rest as MetricType)) throw new Error(`line ${line}: bad type "${rest}"`);
        if (f.samples.length) throw new Error(`line ${line}: TYPE of ${name} after its samples`);
        f.type = rest as MetricType;
      } else f.help = rest;
      return;
    }
    const nameEnd = raw.search(/[{ ]/);
    if (nameEnd <= 0) throw new Error(`line ${line}: not a sample: "${raw}"`);
    const name = raw.slice(0, nameEnd);
    if (!METRIC_NAME.test(name)) throw new Error(`line ${line}: bad metric name "${name}"`);
    let labels: Record<string, string> = {};
    let i = nameEnd;
    if (raw[i] === "{") ({ labels, end: i } = parseLabels(raw, i, line));
    if (raw[i] !== " ") throw new Error(`line ${line}: expected a space before the value`);
    const parts = raw.slice(i + 1).split(" ");
    if (parts.length > 2 || (parts[1] !== undefined && !/^-?\d+$/.test(parts[1]))) throw new Error(`line ${line}: bad value or timestamp`);
    const value = parseValue(parts[0]!, line);
    const f = familyOf(families, name) ?? { name, type: "untyped" as MetricType, help: "", samples: [] };
    if (!families.has(f.name)) {
      if (current) closed.add(current.name);
      families.set(f.name, f);
      current = f;
    }
    if (f !== current) throw new Error(`line ${line}: sample of ${f.name} outside its family's block`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`line ${line}: duplicate series ${key}`);
    seen.add(key);
    if (f.type === "counter" && !(value >= 0)) throw new Error(`line ${line}: counter ${name} is ${value}`);
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

/** Each series' buckets are cumulative, end at +Inf, and the +Inf bucket equals _count. */
function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const entry = series.get(key) ?? { buckets: [] };
    series.set(key, entry);
    if (s.name === `${f.name}_bucket`) {
      if (le === undefined) throw new Error(`${f.name}: bucket without le`);
      entry.buckets.push([parseValue(le, 0), s.value]);
    } else if (s.name === `${f.name}_count`) entry.count = s.value;
  }
  for (const [key, { buckets, count }] of series) {
    for (let i = 1; i < buckets.length; i++) {
      if (!(buckets[i]![0] > buckets[i - 1]![0]) || buckets[i]![1] < buckets[i - 1]![1]) throw new Error(`${f.name}${key}: buckets not cumulative`);
    }
    const last = buckets.at(-1);
    if (!last || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
    if (last[1] !== count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} != _count ${count}`);
  }
}

/** The value of one series (0 when absent); `labels` must match exactly. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const want = JSON.stringify(Object.entries(labels).sort());
  for (const f of families.values()) {
    for (const s of f.samples) if (s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want) return s.value;
  }
  return 0;
}

/** Every sample of a name whose labels include `labels`. */
export function samplesOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): Sample[] {
  const out: Sample[] = [];
  for (const f of families.values()) {
    for (const s of f.samples) if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) out.push(s);
  }
  return out;
}
