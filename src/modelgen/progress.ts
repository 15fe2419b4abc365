// Build progress output: a redrawn bar on a TTY, periodic plain lines otherwise (logs, CI).

function human(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** One progress line: `[#####.....]  50%  12.3M/24.6M params  <label>`. */
export function formatProgress(done: number, total: number, label: string, width = 30): string {
  const frac = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(frac * width);
  const pct = String(Math.floor(frac * 100)).padStart(3);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${pct}%  ${human(done)}/${human(total)} params  ${label}`;
}

export interface ProgressOptions {
  tty: boolean;
  write: (s: string) => void;
  now?: () => number;
  /** Non-TTY: print at most every this many ms (plus at every 10% step and at the end). */
  intervalMs?: number;
}

export function progressReporter(o: ProgressOptions): (done: number, total: number, label: string) => void {
  const now = o.now ?? Date.now;
  const interval = o.intervalMs ?? 10_000;
  let last = -Infinity;
  let lastDecile = -1;
  return (done, total, label) => {
    const t = now();
    const finished = done >= total;
    if (o.tty) {
      // Redraw at most ~10 times a second; the final state always.
      if (!finished && t - last < 100) return;
      last = t;
      o.write(`\r${formatProgress(done, total, label)}\x1b[K${finished ? "\n" : ""}`);
      return;
    }
    const decile = Math.floor((10 * done) / Math.max(1, total));
    if (finished || decile > lastDecile || t - last >= interval) {
      last = t;
      lastDecile = decile;
      o.write(`${formatProgress(done, total, label)}\n`);
    }
  };
}
