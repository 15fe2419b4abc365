// robots.txt as RFC 9309 reads it: groups of user-agent lines with their allow/disallow rules, the group for a
// product token (or `*`), and the longest matching rule deciding a path (`*` any run of characters, `$` the end).

export interface RobotsRule {
  allow: boolean;
  /** The path pattern, percent-encoding normalised. */
  pattern: string;
}

export interface RobotsGroup {
  /** Lowercased product tokens, or "*". */
  agents: string[];
  rules: RobotsRule[];
}

/** The groups of a robots.txt, in file order. Unknown lines (sitemap, crawl-delay, junk) are skipped. */
export function parseRobots(text: string): RobotsGroup[] {
  const groups: RobotsGroup[] = [];
  let current: RobotsGroup | null = null;
  let inRules = false;
  for (const raw of text.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, "");
    const colon = line.indexOf(":");
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === "user-agent") {
      // Consecutive user-agent lines share one group; one after rules starts the next.
      if (!current || inRules) {
        current = { agents: [], rules: [] };
        groups.push(current);
        inRules = false;
      }
      current.agents.push(value === "*" ? "*" : agentToken(value));
    } else if (key === "allow" || key === "disallow") {
      // Rules before any user-agent line belong to no group.
      if (!current) continue;
      inRules = true;
      if (value) current.rules.push({ allow: key === "allow", pattern: detached(normalisePath(value)) });
    }
  }
  return groups;
}

/** A copy of an ASCII string that does not share memory with the file it was cut from (a kept slice pins it all). */
function detached(s: string): string {
  return Buffer.from(s, "latin1").toString("latin1");
}

/** The product token a user-agent line names: its leading letters, `-` and `_` ("Kiln/1.0" → "kiln"). */
function agentToken(value: string): string {
  return (/^[A-Za-z_-]+/.exec(value)?.[0] ?? "").toLowerCase();
}

/** The product token a crawler's User-Agent header starts with ("kiln/0.1.0 (+…)" → "kiln"). */
export function productToken(userAgent: string): string {
  return agentToken(userAgent.trim());
}

/** The rules that apply to `token`: every group naming it, else every `*` group, else none (all allowed). */
export function rulesFor(groups: RobotsGroup[], token: string): RobotsRule[] {
  const t = token.toLowerCase();
  const own = groups.filter((g) => t !== "" && g.agents.includes(t));
  return (own.length ? own : groups.filter((g) => g.agents.includes("*"))).flatMap((g) => g.rules);
}

/**
 * Most matcher steps one path may cost, across all its rules (a few milliseconds). A robots.txt can make matching
 * cost pattern × path steps per rule; past this budget the path counts as disallowed, as RFC 9309 lets a crawler
 * bound the work it spends on a robots.txt.
 */
export const MATCH_STEP_BUDGET = 1_000_000;

/** What the rules say of a path; "too_costly" when matching it would exceed the step budget. */
export type RobotsVerdict = "allowed" | "disallowed" | "too_costly";

/** Whether `path` (path and query) may be fetched: the longest matching rule wins, and Allow wins a tie. */
export function robotsVerdict(rules: RobotsRule[], path: string, budget: number = MATCH_STEP_BUDGET): RobotsVerdict {
  const target = normalisePath(path);
  const left = { steps: budget };
  let best: RobotsRule | null = null;
  for (const rule of rules) {
    const matched = matches(rule.pattern, target, left);
    if (matched === null) return "too_costly";
    if (!matched) continue;
    const longer = !best || rule.pattern.length > best.pattern.length;
    const tieWon = best !== null && rule.pattern.length === best.pattern.length && rule.allow;
    if (longer || tieWon) best = rule;
  }
  return best === null || best.allow ? "allowed" : "disallowed";
}

/**
 * One form for patterns and paths, so `/%7e` and `/~` and `/ä` and `/%C3%A4` compare equal: unreserved characters
 * decoded, other escapes uppercased, non-ASCII characters percent-encoded as UTF-8.
 */
function normalisePath(s: string): string {
  return s
    .replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => {
      const c = String.fromCharCode(parseInt(h, 16));
      return /[A-Za-z0-9\-._~]/.test(c) ? c : `%${h.toUpperCase()}`;
    })
    .replace(/[^\x00-\x7f]+/gu, (run) => Array.from(utf8.encode(run), (b) => `%${b.toString(16).toUpperCase().padStart(2, "0")}`).join(""));
}

const utf8 = new TextEncoder();

const STAR = 0x2a;

/**
 * Whether the pattern matches from the start of the path: `*` any run, a final `$` the end, otherwise a prefix.
 * The greedy-with-backtrack walk takes at most pattern × path steps, each taken from `left`; null when they run out.
 */
function matches(pattern: string, path: string, left: { steps: number }): boolean | null {
  const anchored = pattern.endsWith("$");
  const end = anchored ? pattern.length - 1 : pattern.length;
  let p = 0;
  let i = 0;
  let star = -1;
  let resume = 0;
  while (i < path.length) {
    if (--left.steps < 0) return null;
    // A prefix pattern used up, or a `*` ending the pattern: the rest of the path matches without walking it.
    if (p === end && !anchored) return true;
    const c = p < end ? pattern.charCodeAt(p) : -1;
    if (c === STAR) {
      if (p === end - 1) return true;
      star = p++;
      resume = i;
    } else if (c === path.charCodeAt(i)) {
      p++;
      i++;
    } else if (star >= 0) {
      p = star + 1;
      i = ++resume;
    } else {
      return false;
    }
  }
  while (p < end && pattern.charCodeAt(p) === STAR) p++;
  return p === end;
}
