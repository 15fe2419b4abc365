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
      if (value) current.rules.push({ allow: key === "allow", pattern: normalisePath(value) });
    }
  }
  return groups;
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

/** Whether `path` (path and query) may be fetched: the longest matching rule wins, and Allow wins a tie. */
export function isAllowed(rules: RobotsRule[], path: string): boolean {
  const target = normalisePath(path);
  let best: RobotsRule | null = null;
  for (const rule of rules) {
    if (!matches(rule.pattern, target)) continue;
    const longer = !best || rule.pattern.length > best.pattern.length;
    const tieWon = best !== null && rule.pattern.length === best.pattern.length && rule.allow;
    if (longer || tieWon) best = rule;
  }
  return best?.allow ?? true;
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

/**
 * Whether the pattern matches from the start of the path: `*` any run, a final `$` the end, otherwise a prefix.
 * The greedy-with-backtrack walk takes at most pattern × path steps, never exponential time.
 */
function matches(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith("$");
  const pat = anchored ? pattern.slice(0, -1) : `${pattern}*`;
  let p = 0;
  let i = 0;
  let star = -1;
  let resume = 0;
  while (i < path.length) {
    if (pat[p] === "*") {
      star = p++;
      resume = i;
    } else if (p < pat.length && pat[p] === path[i]) {
      p++;
      i++;
    } else if (star >= 0) {
      p = star + 1;
      i = ++resume;
    } else {
      return false;
    }
  }
  while (pat[p] === "*") p++;
  return p === pat.length;
}
