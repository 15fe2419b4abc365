// The S3 options (files in an S3-compatible object store): each value's parser, and the check that they make sense
// together, so a half-configured store stops start-up with one line instead of failing at the first upload.
import { ConfigError, urlOf } from "./config-values.ts";

/** An S3 bucket name: 3 to 63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit. */
export function bucketName(raw: string, name: string): string {
  const b = raw.trim();
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(b) || b.includes("..")) {
    throw new ConfigError(`${name} must be an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens), got "${raw}"`);
  }
  return b;
}

/** The origin of an http(s) endpoint: scheme, host and port, nothing else (kiln addresses buckets path-style). */
export function originUrl(raw: string, name: string): string {
  const u = urlOf(raw, `${name} must be an http(s) URL, got "${raw}"`);
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.username || u.password || u.pathname !== "/" || u.search || u.hash) {
    throw new ConfigError(`${name} must be http(s)://host[:port] with no path, query or credentials, got "${u.protocol}//${u.host}${u.pathname}"`);
  }
  return u.origin;
}

/** A region name such as us-east-1 (stores that have none accept us-east-1). */
export function regionName(raw: string, name: string): string {
  if (!/^[a-z0-9][a-z0-9-]*$/.test(raw.trim())) throw new ConfigError(`${name} must be a region name such as us-east-1, got "${raw}"`);
  return raw.trim();
}

/**
 * S3 options without a bucket, or a bucket without both keys, are a ConfigError naming what is missing (the secret's
 * value is never part of a message).
 */
export function checkS3Options(v: { s3Bucket?: string; s3Endpoint?: string; s3AccessKeyId?: string; s3SecretAccessKey?: string }): void {
  if (!v.s3Bucket) {
    const set = [["KILN_S3_ENDPOINT", v.s3Endpoint], ["KILN_S3_ACCESS_KEY_ID", v.s3AccessKeyId], ["KILN_S3_SECRET_ACCESS_KEY", v.s3SecretAccessKey]].find(([, x]) => x);
    if (set) throw new ConfigError(`${set[0]} is set but KILN_S3_BUCKET is not: set the bucket to keep files in S3, or unset the S3 options to keep them on disk`);
    return;
  }
  const missing = [["KILN_S3_ACCESS_KEY_ID", v.s3AccessKeyId], ["KILN_S3_SECRET_ACCESS_KEY", v.s3SecretAccessKey]].filter(([, x]) => !x).map(([n]) => n);
  if (missing.length) throw new ConfigError(`KILN_S3_BUCKET is set but ${missing.join(" and ")} ${missing.length > 1 ? "are" : "is"} not: S3 needs both keys`);
}
