// Uploads to POST /v1/files over a raw socket, the file's bytes generated as they are sent (a 1 GiB upload holds
// 1 MiB in the client), optionally stopping part-way (a client that vanishes). Loopback only.
import { createHash } from "node:crypto";
import { connect } from "node:net";
import { parseResponse, type RawResponse } from "./raw-http.ts";

const MiB = 1024 * 1024;
export const BOUNDARY = "kiln-test-boundary-7d1e0b3c";

/**
 * The bytes of a generated file: 0,1,…,250 repeated. It never holds a CR followed by an LF (13 is followed by 14),
 * so it cannot contain a multipart delimiter.
 */
export const PATTERN = Buffer.from(Array.from({ length: MiB }, (_, i) => i % 251));

/** The bytes at `offset..offset+length` of a generated file of any size. */
export function patternSlice(offset: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let at = 0; at < length; ) {
    const from = (offset + at) % 251;
    const n = Math.min(length - at, PATTERN.length - from);
    PATTERN.copy(out, at, from, from + n);
    at += n;
  }
  return out;
}

/** Text lines of 63 letters and a newline: 1 MiB of them, which a text file repeats (a UTF-8 document, no NUL). */
const TEXT = Buffer.from(Array.from({ length: MiB }, (_, i) => (i % 64 === 63 ? 10 : 97 + (i % 26))));

/** The bytes at `offset..offset+length` of a generated text file (TEXT repeated). */
export function textSlice(offset: number, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let at = 0; at < length; ) {
    const from = (offset + at) % MiB;
    const n = Math.min(length - at, MiB - from);
    TEXT.copy(out, at, from, from + n);
    at += n;
  }
  return out;
}

/** sha256 of a generated file of `bytes` bytes. */
export function patternSha256(bytes: number): string {
  const h = createHash("sha256");
  for (let at = 0; at < bytes; at += MiB) h.update(patternSlice(at, Math.min(MiB, bytes - at)));
  return h.digest("hex");
}

export interface RawUpload {
  key: string;
  /** Size of the generated file. */
  bytes: number;
  purpose?: string;
  /** The purpose field comes after the file part (before it by default). */
  purposeLast?: boolean;
  filename?: string;
  /** The file is text (textSlice) rather than the binary pattern. */
  text?: boolean;
  /** After `after` file bytes: wait for `until`, then go on sending ("resume") or vanish ("close": status 0). */
  interrupt?: { after: number; until: () => Promise<unknown>; then: "resume" | "close" };
}

function formParts(u: RawUpload): { head: Buffer; tail: Buffer } {
  const purpose = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\n${u.purpose ?? "user_data"}\r\n`;
  const fileHead = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${u.filename ?? "big.bin"}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const head = u.purposeLast ? fileHead : purpose + fileHead;
  const tail = `\r\n${u.purposeLast ? purpose : ""}--${BOUNDARY}--\r\n`;
  return { head: Buffer.from(head), tail: Buffer.from(tail) };
}

/** Sends the upload; resolves with the answer, or status 0 when the connection closed without one (or was stopped). */
export function rawUpload(url: string, u: RawUpload): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const { head, tail } = formParts(u);
  const length = head.length + u.bytes + tail.length;
  return new Promise((resolve) => {
    const sock = connect(Number(port), hostname);
    let text = "";
    let sent = 0;
    let settled = false;
    const finish = (res: RawResponse) => {
      if (settled) return;
      settled = true;
      sock.destroy();
      resolve(res);
    };
    let interrupted = false;
    const pump = () => {
      const stop = u.interrupt && !interrupted ? u.interrupt.after : u.bytes;
      while (sent < stop) {
        const n = Math.min(MiB, stop - sent);
        const ok = sock.write((u.text ? textSlice : patternSlice)(sent, n));
        sent += n;
        if (!ok) return void sock.once("drain", pump);
      }
      if (u.interrupt && !interrupted) {
        interrupted = true;
        const then = u.interrupt.then;
        return void u.interrupt.until().then(() => (then === "close" ? finish({ status: 0, headers: {}, body: "", raw: text }) : pump()));
      }
      sock.write(tail);
    };
    sock.setEncoding("latin1");
    sock.on("connect", () => {
      sock.write(`POST /v1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${u.key}\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\n\r\n`);
      sock.write(head);
      pump();
    });
    sock.on("data", (d: string) => {
      text += d;
      const parsed = parseResponse(text);
      if (parsed) finish(parsed.res);
    });
    sock.on("error", () => finish({ status: 0, headers: {}, body: "", raw: text }));
    sock.on("close", () => finish({ status: 0, headers: {}, body: "", raw: text }));
  });
}
