// The value parsers behind kiln's options (src/config.ts): each takes the raw text and the option's name, and
// returns the value or throws a ConfigError naming the option and what is wrong with it.
import { isIP } from "node:net";
import { BUILTIN_MODEL_IDS } from "./modelgen/install.ts";
import { canonicalIp } from "./http/ip-address.ts";
import { parseHostPatterns } from "./media/host-patterns.ts";
import { parseTiers, TIER_NAME } from "./ratelimit/tiers.ts";
import { parseTierPrices } from "./billing/tier-prices.ts";

/** A bad option value, or a bad combination of options: start-up stops with its message on one line. */
export class ConfigError extends Error {}

export function int(min: number, max: number) {
  return (raw: string, name: string) => {
    if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

export function nonEmpty(raw: string, name: string) {
  if (!raw.trim()) throw new ConfigError(`${name} must not be empty`);
  return raw.trim();
}

/** `raw` (trimmed) as a URL; `refusal` is the error when it is not one (a URL option's own words for what it wants). */
export function urlOf(raw: string, refusal: string): URL {
  try {
    return new URL(raw.trim());
  } catch {
    throw new ConfigError(refusal);
  }
}

/** An http(s) base URL without query or fragment (kiln appends /search?q=…&format=json to its path). */
export function baseUrl(raw: string, name: string) {
  const u = urlOf(raw, `${name} must be an http(s) URL, got "${raw}"`);
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.search || u.hash) {
    throw new ConfigError(`${name} must be an http(s) URL without a query or fragment, got "${raw}"`);
  }
  return u.href.replace(/\/+$/, "");
}

/** An admin secret: long enough that guessing it is hopeless, and printable (it travels in a header). */
export function secret(raw: string, name: string) {
  if (!/^[\x21-\x7e]{16,}$/.test(raw)) throw new ConfigError(`${name} must be at least 16 printable characters without spaces`);
  return raw;
}

/** IP addresses, comma-separated (IPv4 or IPv6 literals, no names: a name would be looked up on every request). */
export function addressList(raw: string, name: string) {
  const list = raw.split(",").map((a) => a.trim()).filter(Boolean);
  const bad = list.find((a) => !isIP(a));
  if (bad !== undefined) throw new ConfigError(`${name} must be IP addresses separated by commas, got "${bad}"`);
  return list.map(canonicalIp);
}

/** A decimal number such as 0.5 or 2. */
export function decimal(min: number, max: number) {
  return (raw: string, name: string) => {
    if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw new ConfigError(`${name} must be a number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
    return n;
  };
}

/** A switch: 1/true/yes/on or 0/false/no/off. */
export function flag(raw: string, name: string) {
  const t = raw.trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(t)) return true;
  if (["0", "false", "no", "off"].includes(t)) return false;
  throw new ConfigError(`${name} must be 1 or 0 (true/false, yes/no, on/off), got "${raw}"`);
}

export function hostPatterns(raw: string, name: string) {
  try {
    return Object.freeze(parseHostPatterns(raw));
  } catch (e) {
    throw new ConfigError(`${name} ${(e as Error).message}`);
  }
}

export function tierList(raw: string, name: string) {
  try {
    return Object.freeze(parseTiers(raw));
  } catch (e) {
    throw new ConfigError(`${name}: ${(e as Error).message}`);
  }
}

export function tierPrices(raw: string, name: string) {
  try {
    return parseTierPrices(raw);
  } catch (e) {
    throw new ConfigError(`${name}: ${(e as Error).message}`);
  }
}

export function tierName(raw: string, name: string) {
  if (!TIER_NAME.test(raw.trim())) throw new ConfigError(`${name} must be a tier name (lowercase letters, digits, - and _), got "${raw}"`);
  return raw.trim();
}

/** A comma-separated list of built-in model ids; "none" (or nothing) for none. */
export function builtinList(raw: string, name: string) {
  const ids = raw.trim().toLowerCase() === "none" ? [] : raw.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = ids.find((id) => !BUILTIN_MODEL_IDS.includes(id));
  if (unknown) throw new ConfigError(`${name} lists "${unknown}", which is not a built-in model (${BUILTIN_MODEL_IDS.join(", ")}, or none)`);
  return Object.freeze([...new Set(ids)]);
}

/** A Redis URL: redis:// or rediss:// (TLS), a host, and optionally a user, password and database number. */
export function redisUrl(raw: string, name: string) {
  const u = urlOf(raw, `${name} must be a redis:// or rediss:// URL, got "${raw}"`);
  if ((u.protocol !== "redis:" && u.protocol !== "rediss:") || !u.hostname || u.search || u.hash || !/^\/?\d*$/.test(u.pathname)) {
    throw new ConfigError(`${name} must be a redis:// or rediss:// URL with a host (and at most a database number as its path), got "${raw.replace(/\/\/[^@/]*@/, "//…@")}"`);
  }
  return raw.trim();
}

/**
 * A Postgres URL: postgres:// or postgresql://, a host, and optionally a user, password, port, database and options
 * (`?sslmode=require`). A message never repeats its credentials or options.
 */
export function postgresUrl(raw: string, name: string) {
  const u = urlOf(raw, `${name} must be a postgres:// or postgresql:// URL, such as postgres://kiln:password@db.internal:5432/kiln`);
  if ((u.protocol !== "postgres:" && u.protocol !== "postgresql:") || !u.hostname || u.hash) {
    throw new ConfigError(`${name} must be a postgres:// or postgresql:// URL with a host, got "${u.protocol}//${u.host}${u.pathname}"`);
  }
  return raw.trim();
}
