// Reads `npm run bench -- --prefix`'s printout back, for the README test: every row present with figures where figures
// belong, targets stated, and (once the server reports its prefill counts) what the cache visibly did. Never speed.

export interface PrefixShape {
  turns: number;
  clients: number;
  levels: number[];
}

const MS = /^\d+\.\d$/;
const TIMES = /^\d+\.\d\d×$/;
const COUNT = /^(\d+|n\/a)$/;

/** The printed table's rows by their first cell. */
export function tableRows(out: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of out.split("\n")) {
    if (!line.startsWith("| ") || !line.endsWith(" |")) continue;
    const cells = line.slice(2, -2).split(" | ").map((c) => c.trim());
    rows.set(cells[0]!, cells.slice(1));
  }
  return rows;
}

/** What is wrong with a printout of the given shape; empty when nothing is. */
export function prefixOutputProblems(out: string, shape: PrefixShape): string[] {
  const problems: string[] = [];
  const rows = tableRows(out);
  /** Checks a row's leading cells against patterns (a string is matched whole) and returns its cells. */
  const row = (label: string, ...want: (RegExp | string)[]): string[] => {
    const cells = rows.get(label);
    if (!cells) {
      problems.push(`no row "${label}"`);
      return [];
    }
    want.forEach((w, i) => {
      const c = cells[i] ?? "";
      if (typeof w === "string" ? c !== w : !w.test(c)) problems.push(`"${label}" cell ${i + 1} is "${c}", expected ${w}`);
    });
    return cells;
  };
  if (!/^cpu: .+int8 kernels: .+; load average \d+\.\d on \d+ cores$/m.test(out)) problems.push("no cpu line");
  const n = shape.turns;
  const figures: Record<string, { cached: string[]; prefill: string[] }> = {};
  for (const c of ["Responses previous_response_id", "Messages history re-sent"]) {
    row(`${c}: TTFT turn 1 ms`, MS, MS, /^off\/on \d+\.\d\d×$/);
    row(`${c}: TTFT turn ${n} ms`, MS, MS, /^off\/on \d+\.\d\d×$/);
    row(`${c}: TTFT turn ${n} / turn 1`, TIMES, TIMES, "", "", "on ≤ 1.2×");
    figures[c] = { cached: row(`${c}: cached tokens at turn ${n}`, COUNT, COUNT), prefill: row(`${c}: prefill tokens computed`, COUNT, COUNT) };
  }
  const shared = `${shape.clients} clients, one 1500-token system prompt`;
  row(`${shared}: prefill tokens computed`, COUNT, COUNT, /^(\d+\.\d% fewer|n\/a)$/, "", "≥ 90% fewer");
  row(`${shared}: cached tokens, all clients`, COUNT, COUNT);
  row(`${shared}: TTFT p50 ms`, MS, MS, /^off\/on \d+\.\d\d×$/);
  row(`${shared}: TTFT p95 ms`, MS, MS, /^off\/on \d+\.\d\d×$/, "", "off/on ≥ 3×");
  for (const c of shape.levels) {
    row(`fresh prompts, ${c} client${c === 1 ? "" : "s"}: output tok/s`, MS, MS, /^on\/off \d+\.\d\d×$/, /^(\d+\.\d Q[48]_0|skipped)$/, "on/off ≥ 0.97×");
  }
  // Responses reports cached_tokens already (0 without a cache); Messages' field comes with the cache.
  const chain = figures["Responses previous_response_id"]!;
  if (chain.cached[0] === "n/a") problems.push("the Responses chain reported no cached_tokens");
  // Once the server counts its prefill passes, the cache shows in what it did: the chain's last turn read cached
  // tokens on the cache-on server only, and that server computed fewer prompt tokens over the chain.
  if (/^\d+$/.test(chain.prefill[0] ?? "") && /^\d+$/.test(chain.prefill[1] ?? "")) {
    if (!(Number(chain.cached[0]) > 0)) problems.push(`with the cache on, the chain's turn ${n} read ${chain.cached[0]} cached tokens`);
    if (chain.cached[1] !== "0") problems.push(`with the cache off, the chain's turn ${n} read ${chain.cached[1]} cached tokens`);
    if (!(Number(chain.prefill[0]) < Number(chain.prefill[1]))) problems.push(`the chain computed ${chain.prefill[0]} prefill tokens with the cache, ${chain.prefill[1]} without`);
  }
  // Targets are printed, never asserted: each says met or MISSED with its figure, or n/a with why.
  const targets = out.split("\n").filter((l) => l.startsWith("target "));
  const expected = 4 + shape.levels.length;
  if (targets.length !== expected) problems.push(`${targets.length} target lines, expected ${expected}`);
  for (const t of targets) {
    if (!/: (\d+\.\d+(×|% fewer) \((met|MISSED)\)|n\/a \(.+\))$/.test(t)) problems.push(`target line without a verdict: ${t}`);
    else if (/TTFT/.test(t) && !/\((met|MISSED)\)$/.test(t)) problems.push(`TTFT target without a figure: ${t}`);
  }
  for (const side of ["on", "off"]) {
    if (!new RegExp(`^cache ${side} server after the sitting: prefix cache blocks (\\d+|n/a), `, "m").test(out)) problems.push(`no cache line for the cache-${side} server`);
  }
  return problems;
}
