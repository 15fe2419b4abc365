// The header parts of multipart/form-data: the boundary in the request's Content-Type, and each part's name,
// filename and type from its own header block. Pure functions; every refusal is a 400 a client can act on.
import { ApiError, clip } from "../errors/api-error.ts";

/** `form-data; name="file"; filename="a b.txt"` → the type and its parameters (names lowercased, quotes undone). */
export function parseParams(value: string): { type: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  let at = value.indexOf(";");
  const type = (at < 0 ? value : value.slice(0, at)).trim().toLowerCase();
  while (at >= 0 && at < value.length) {
    at++;
    const eq = value.indexOf("=", at);
    if (eq < 0) break;
    const name = value.slice(at, eq).trim().toLowerCase();
    at = eq + 1;
    while (value[at] === " " || value[at] === "\t") at++;
    let v = "";
    if (value[at] === '"') {
      // A quoted string: backslash escapes the next character.
      for (at++; at < value.length && value[at] !== '"'; at++) v += value[at] === "\\" && at + 1 < value.length ? value[++at] : value[at];
      at = value.indexOf(";", at);
    } else {
      const end = value.indexOf(";", at);
      v = (end < 0 ? value.slice(at) : value.slice(at, end)).trim();
      at = end;
    }
    if (name && !params.has(name)) params.set(name, v);
  }
  return { type, params };
}

/** The boundary of a multipart/form-data Content-Type; a 400 for any other type or a missing or malformed boundary. */
export function boundaryOf(contentType: string | null): string {
  const { type, params } = parseParams(contentType ?? "");
  if (type !== "multipart/form-data") {
    throw ApiError.badRequest(`Upload the file as multipart/form-data with the fields file and purpose (got Content-Type '${clip(contentType ?? "")}').`);
  }
  const boundary = params.get("boundary");
  // RFC 2046: 1 to 70 characters; printable ASCII keeps CR and LF (and so header injection) out of the search.
  if (!boundary || boundary.length > 70 || !/^[\x20-\x7e]+$/.test(boundary)) {
    throw ApiError.badRequest("The multipart/form-data Content-Type needs a boundary of 1 to 70 printable characters.");
  }
  return boundary;
}

export interface PartInfo {
  /** The form field's name. */
  name: string;
  /** The client's file name, when the part is a file; never used to name anything on disk. */
  filename: string | null;
  contentType: string | null;
}

/** RFC 5987 `UTF-8''na%C3%AFve.txt` → "naïve.txt"; null when it cannot be read. */
function extValue(v: string): string | null {
  const m = /^([^']*)'[^']*'(.*)$/.exec(v);
  if (!m || !/^utf-8$/i.test(m[1]!)) return null;
  try {
    return decodeURIComponent(m[2]!);
  } catch {
    return null;
  }
}

/** A part's header block (the lines between its boundary and the blank line) → its field name, filename and type. */
export function partInfo(block: string): PartInfo {
  const headers = new Map<string, string>();
  let last = "";
  for (const line of block.split("\r\n")) {
    if (!line) continue;
    // An obsolete folded line continues the header before it.
    if ((line[0] === " " || line[0] === "\t") && last) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) throw ApiError.badRequest(`A part of the multipart body has a malformed header line ('${clip(line)}').`);
    last = line.slice(0, colon).trim().toLowerCase();
    headers.set(last, line.slice(colon + 1).trim());
  }
  const disposition = headers.get("content-disposition");
  const { type, params } = parseParams(disposition ?? "");
  if (type !== "form-data" || !params.has("name")) {
    throw ApiError.badRequest("Each part of the multipart body needs a Content-Disposition: form-data header with a name.");
  }
  const star = params.get("filename*");
  const filename = (star !== undefined ? extValue(star) : null) ?? params.get("filename") ?? null;
  return { name: params.get("name")!, filename, contentType: headers.get("content-type") ?? null };
}
