// Open multipart uploads in an S3 bucket: listed (ListMultipartUploads) and aborted (AbortMultipartUpload) through
// signed requests of our own, since Bun's S3 client never names an upload id. A replica killed mid-upload leaves one
// open: its parts are stored (and billed) but are no object, and only an abort removes them.
import { canonicalQuery, type S3Credentials, signedHeaders, uriEncode } from "./s3-signature.ts";

export interface OpenUpload {
  key: string;
  uploadId: string;
  /** When CreateMultipartUpload ran (ms since the epoch; NaN if the server gave no readable date). */
  initiatedMs: number;
}

export interface UploadListPage {
  uploads: OpenUpload[];
  /** The markers of the next page, when the list is truncated. */
  next: { keyMarker: string; uploadIdMarker: string } | null;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    if (e[0] !== "#") return ENTITIES[e.toLowerCase()]!;
    return String.fromCodePoint(e[1]?.toLowerCase() === "x" ? parseInt(e.slice(2), 16) : Number(e.slice(1)));
  });
}

/** The text of the first <tag> element in `xml`, or null. */
function element(xml: string, tag: string): string | null {
  const m = xml.match(new RegExp(`<${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</${tag}>`));
  return m ? unescapeXml(m[1]!.trim()) : null;
}

/**
 * One page of a ListMultipartUploads answer, or null when the body is not one (a server that does not implement the
 * call may answer GET ?uploads with the bucket's object listing instead).
 */
export function parseUploadList(xml: string): UploadListPage | null {
  if (!/<ListMultipartUploadsResult[\s>]/.test(xml)) return null;
  const uploads: OpenUpload[] = [];
  for (const [, body] of xml.matchAll(/<Upload>([\s\S]*?)<\/Upload>/g)) {
    const key = element(body!, "Key");
    const uploadId = element(body!, "UploadId");
    if (key === null || uploadId === null) continue;
    uploads.push({ key, uploadId, initiatedMs: Date.parse(element(body!, "Initiated") ?? "") });
  }
  const truncated = element(xml, "IsTruncated") === "true";
  const keyMarker = element(xml, "NextKeyMarker");
  const uploadIdMarker = element(xml, "NextUploadIdMarker");
  return { uploads, next: truncated && keyMarker !== null ? { keyMarker, uploadIdMarker: uploadIdMarker ?? "" } : null };
}

/** Uploads started before `beforeMs` (an upload with no readable date counts as stale: nothing can vouch for it). */
export function staleUploads(uploads: OpenUpload[], beforeMs: number): OpenUpload[] {
  return uploads.filter((u) => !(u.initiatedMs >= beforeMs));
}

export interface BucketAddress extends S3Credentials {
  /** Origin of the S3 endpoint, without a trailing slash: requests are path-style, <endpoint>/<bucket>/<key>. */
  endpoint: string;
  bucket: string;
}

/**
 * A path-style URL of the bucket (or of one object in it) with `query`, encoded exactly as SigV4 signs it, so the
 * server reads back what was signed.
 */
function bucketUrl(b: BucketAddress, key: string | null, query: [string, string][]): URL {
  const url = new URL(`${b.endpoint}/${uriEncode(b.bucket)}${key === null ? "" : `/${uriEncode(key, true)}`}`);
  url.search = canonicalQuery(query);
  return url;
}

async function failure(what: string, res: Response): Promise<Error> {
  const body = await res.text().catch(() => "");
  const code = body.match(/<Code>([^<]*)<\/Code>/)?.[1];
  return new Error(`${what} answered HTTP ${res.status}${code ? ` ${code}` : ""}`);
}

/**
 * Every open multipart upload under `prefix`, page by page; or, when the store will not list them, why: it does not
 * implement ListMultipartUploads, or the credentials lack its permission (the caller says it could not look).
 */
export async function listOpenUploads(b: BucketAddress, prefix: string, now = () => new Date()): Promise<OpenUpload[] | { unlisted: string }> {
  const all: OpenUpload[] = [];
  let marker: UploadListPage["next"] = null;
  do {
    const query: [string, string][] = [["uploads", ""], ["prefix", prefix]];
    if (marker) query.push(["key-marker", marker.keyMarker], ["upload-id-marker", marker.uploadIdMarker]);
    const url = bucketUrl(b, null, query);
    const res = await fetch(url, { headers: signedHeaders("GET", url, b, now()) });
    if (res.status === 501) return { unlisted: "the store does not implement ListMultipartUploads" };
    if (res.status === 403) return { unlisted: "ListMultipartUploads is denied to these credentials" };
    if (!res.ok) throw await failure("ListMultipartUploads", res);
    const page = parseUploadList(await res.text());
    if (!page) return { unlisted: "the store does not implement ListMultipartUploads" };
    all.push(...page.uploads);
    marker = page.next;
  } while (marker);
  return all;
}

/**
 * Aborts one multipart upload: S3 discards its parts, and a CompleteMultipartUpload can no longer make it an object.
 * An upload already gone (completed or aborted meanwhile: 404 NoSuchUpload) is not an error.
 */
export async function abortUpload(b: BucketAddress, upload: { key: string; uploadId: string }, now = () => new Date()): Promise<void> {
  const url = bucketUrl(b, upload.key, [["uploadId", upload.uploadId]]);
  const res = await fetch(url, { method: "DELETE", headers: signedHeaders("DELETE", url, b, now()) });
  if (res.ok || res.status === 404) return void (await res.body?.cancel());
  throw await failure("AbortMultipartUpload", res);
}
