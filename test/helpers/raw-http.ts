// A raw HTTP/1.1 client over one TCP socket, for requests fetch will not send (odd Host headers, bad methods,
// broken framing) and for keep-alive control. Loopback only.
import { connect, type Socket } from "node:net";

export interface RawResponse {
  /** 0 when the server closed the connection without answering. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Bytes of the answer as received (head and body). */
  raw: string;
}

/** Parses one response from the start of `text`; null while it is incomplete. Returns the bytes it used. */
export function parseResponse(text: string): { res: RawResponse; used: number } | null {
  const headEnd = text.indexOf("\r\n\r\n");
  if (headEnd < 0) return null;
  const [statusLine, ...lines] = text.slice(0, headEnd).split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(":");
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const status = Number(statusLine!.split(" ")[1]);
  let at = headEnd + 4;
  let body = "";
  if (headers["transfer-encoding"]?.includes("chunked")) {
    for (;;) {
      const eol = text.indexOf("\r\n", at);
      if (eol < 0) return null;
      const size = parseInt(text.slice(at, eol), 16);
      if (text.length < eol + 2 + size + 2) return null;
      body += text.slice(eol + 2, eol + 2 + size);
      at = eol + 2 + size + 2;
      if (size === 0) break;
    }
  } else {
    const length = Number(headers["content-length"] ?? 0);
    if (text.length < at + length) return null;
    body = text.slice(at, at + length);
    at += length;
  }
  // The socket is read as latin1 (one char per byte, so lengths match the headers); the body is UTF-8.
  return { res: { status, headers, body: Buffer.from(body, "latin1").toString("utf8"), raw: text.slice(0, at) }, used: at };
}

/** One connection that can carry several requests in turn (keep-alive). */
export class RawConnection {
  private buffer = "";
  private waiters: (() => void)[] = [];
  closed = false;
  private constructor(private readonly sock: Socket) {
    sock.setEncoding("latin1");
    sock.on("data", (d: string) => {
      this.buffer += d;
      this.wake();
    });
    const end = () => {
      this.closed = true;
      this.wake();
    };
    sock.on("close", end);
    sock.on("error", end);
  }

  /** `from`: the loopback address to connect from (127.0.0.2 is another client than 127.0.0.1 to the server). */
  static open(port: number, host = "127.0.0.1", from?: string): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const sock = connect({ port, host, ...(from ? { localAddress: from } : {}) }, () => resolve(new RawConnection(sock)));
      sock.once("error", reject);
    });
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  write(data: string | Uint8Array): void {
    if (!this.closed) this.sock.write(data);
  }

  /** The next response on this connection (status 0 if it closes first, or after `timeoutMs`). */
  async read(timeoutMs = 10_000): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = parseResponse(this.buffer);
      if (parsed) {
        this.buffer = this.buffer.slice(parsed.used);
        return parsed.res;
      }
      if (this.closed || Date.now() > deadline) return { status: 0, headers: {}, body: "", raw: this.buffer };
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Resolves true once the server has closed the connection (false after `timeoutMs`). */
  async waitClosed(timeoutMs = 5000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await Bun.sleep(20);
    return this.closed;
  }

  close(): void {
    this.sock.destroy();
  }
}

/** Sends one request on a fresh connection and reads one response. */
export async function rawRequest(port: number, request: string | Uint8Array, timeoutMs = 10_000, from?: string): Promise<RawResponse> {
  const conn = await RawConnection.open(port, "127.0.0.1", from);
  try {
    conn.write(request);
    return await conn.read(timeoutMs);
  } finally {
    conn.close();
  }
}

/** An HTTP/1.1 request's bytes; `headers` may set Host (or omit it with host: null). */
export function httpRequest(method: string, target: string, opts: { host?: string | null; headers?: Record<string, string>; body?: string } = {}): string {
  const lines = [`${method} ${target} HTTP/1.1`];
  if (opts.host !== null) lines.push(`Host: ${opts.host ?? "127.0.0.1"}`);
  for (const [k, v] of Object.entries(opts.headers ?? {})) lines.push(`${k}: ${v}`);
  if (opts.body !== undefined) lines.push(`Content-Length: ${Buffer.byteLength(opts.body)}`);
  return `${lines.join("\r\n")}\r\n\r\n${opts.body ?? ""}`;
}
