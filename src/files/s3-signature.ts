// AWS Signature Version 4 for the few S3 calls Bun's S3 client does not make (ListMultipartUploads,
// AbortMultipartUpload by upload id): the canonical request, the string to sign and the derived key, as pure functions.
import { createHash, createHmac } from "node:crypto";

/** sha256 of an empty body: what GET, HEAD and DELETE requests declare in x-amz-content-sha256. */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

/** RFC 3986 encoding as SigV4 wants it: every byte but A-Z a-z 0-9 - _ . ~ as %XX (uppercase); "/" kept in paths. */
export function uriEncode(text: string, keepSlash = false): string {
  const encoded = encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return keepSlash ? encoded.replace(/%2F/g, "/") : encoded;
}

/** The query as SigV4 signs it: each name and value encoded, sorted by name then value, joined with &. */
export function canonicalQuery(params: [string, string][]): string {
  return params
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

export interface SigningInput {
  method: string;
  /** The path as sent, already encoded (S3 signs it as it is, without encoding it twice). */
  path: string;
  query: [string, string][];
  /** The headers to sign (host among them); names in any case. */
  headers: Record<string, string>;
  /** Hex sha256 of the body, or UNSIGNED-PAYLOAD. */
  payloadHash: string;
  /** ISO 8601 basic format: 20130524T000000Z. */
  amzDate: string;
  region: string;
  service: string;
  secretAccessKey: string;
}

const hmac = (key: Buffer | string, text: string) => createHmac("sha256", key).update(text, "utf8").digest();
const sha256Hex = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The signature of one request, with the signed header list and the credential scope it was made for. */
export function signatureV4(input: SigningInput): { signature: string; signedHeaders: string; scope: string } {
  const headers = Object.entries(input.headers)
    .map(([k, v]) => [k.toLowerCase(), v.trim().replace(/\s+/g, " ")] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signedHeaders = headers.map(([k]) => k).join(";");
  const canonicalRequest = [
    input.method, input.path, canonicalQuery(input.query), headers.map(([k, v]) => `${k}:${v}\n`).join(""), signedHeaders, input.payloadHash,
  ].join("\n");
  const day = input.amzDate.slice(0, 8);
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", input.amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${input.secretAccessKey}`, day), input.region), input.service), "aws4_request");
  return { signature: createHmac("sha256", key).update(stringToSign, "utf8").digest("hex"), signedHeaders, scope };
}

/** 20130524T000000Z for a date. */
export function amzDate(at: Date): string {
  return at.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/**
 * The headers that authenticate a bodiless S3 request to `url` (Authorization, x-amz-date, x-amz-content-sha256):
 * signed are host and the two x-amz headers.
 */
export function signedHeaders(method: string, url: URL, creds: S3Credentials, at: Date): Record<string, string> {
  const date = amzDate(at);
  const headers = { host: url.host, "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": date };
  const query = [...url.searchParams.entries()];
  const { signature, signedHeaders, scope } = signatureV4({
    method, path: url.pathname, query, headers, payloadHash: EMPTY_SHA256, amzDate: date, region: creds.region, service: "s3", secretAccessKey: creds.secretAccessKey,
  });
  return {
    "x-amz-content-sha256": EMPTY_SHA256,
    "x-amz-date": date,
    authorization: `AWS4-HMAC-SHA256 Credential=${creds.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}
