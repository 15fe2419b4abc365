// The operator's fetch allow-list: host patterns (`images.example.com`, `*.cdn.example.org`) parsed once from config
// into URL-normalised form, and matched against a URL's hostname.

/**
 * Parses a comma-separated list of host patterns into normalised ones (lowercase, punycode, no trailing dot).
 * `*.` in front matches any subdomain (not the name itself). Throws an Error naming a bad pattern.
 */
export function parseHostPatterns(raw: string): string[] {
  const patterns = raw.split(",").map((p) => p.trim()).filter(Boolean);
  if (!patterns.length) throw new Error("must list at least one host pattern (unset it to allow any public host)");
  return patterns.map(normalisePattern);
}

function normalisePattern(pattern: string): string {
  const wildcard = pattern.startsWith("*.");
  const name = wildcard ? pattern.slice(2) : pattern;
  let hostname: string;
  try {
    const u = new URL(`http://${name}/`);
    // Anything beyond a bare host (a port, even the default one; a path; credentials; a second `*`) is a mistake.
    const port = name.replace(/^\[.*\]$/, "").includes(":");
    if (port || u.username || u.password || u.pathname !== "/" || u.search || u.hash || name.includes("*")) throw new Error();
    hostname = bareHost(u.hostname);
  } catch {
    throw new Error(`"${pattern}" is not a host pattern (a host name, optionally starting with "*.")`);
  }
  return wildcard ? `*.${hostname}` : hostname;
}

/** A hostname without the trailing dot of a fully qualified name ("example.com." and "example.com" are one host). */
export function bareHost(hostname: string): string {
  return hostname.replace(/\.$/, "");
}

/** Whether a URL's hostname (as `URL` gives it) is on the list; an empty list allows every host. */
export function hostAllowed(patterns: readonly string[], hostname: string): boolean {
  if (!patterns.length) return true;
  const host = bareHost(hostname.toLowerCase());
  return patterns.some((p) => (p.startsWith("*.") ? host.endsWith(p.slice(1)) : host === p));
}
