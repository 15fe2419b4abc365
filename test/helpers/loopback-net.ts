// What remote-fetch tests run on: an injected net whose names resolve from a fixed table (no DNS) and whose connector
// refuses, and records, any address outside 127.0.0.0/8 and ::1 before the real connector runs, even if the policy
// is broken; a recording loopback server; and a helper that expects a FetchRefusal.
import { type Connector, directConnector, type Net } from "../../src/media/fetch-net.ts";
import { FetchRefusal } from "../../src/media/types.ts";

export interface LoopbackNet extends Net {
  /** Every address the connector was asked to reach, in order. */
  connected: string[];
  /** Every name the resolver was asked about, in order. */
  resolved: string[];
  /** Addresses outside loopback the connector was asked to reach: a test fails if this is not empty. */
  violations: string[];
}

/** Checked by a pattern of its own, not by the classifier under test. */
const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1)$/;

/**
 * A guarded net: `names` maps host names to the addresses they resolve to (others fail as unknown names), and
 * `connect` (the real direct connector by default) is reached only for loopback addresses.
 */
export function loopbackNet(names: Record<string, string[]> = {}, connect: Connector = directConnector()): LoopbackNet {
  const net: LoopbackNet = {
    connected: [],
    resolved: [],
    violations: [],
    resolve: async (hostname) => {
      net.resolved.push(hostname);
      const addresses = names[hostname];
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
      return addresses;
    },
    connect: async (req) => {
      net.connected.push(req.address);
      if (!LOOPBACK.test(req.address)) {
        net.violations.push(req.address);
        throw new Error(`test guard: refused to connect to ${req.address}, outside loopback`);
      }
      return connect(req);
    },
  };
  return net;
}

/** What a loopback test server saw of one request. */
export interface SeenRequest {
  path: string;
  host: string | null;
  userAgent: string | null;
  acceptEncoding: string | null;
}

export interface LoopbackServer {
  port: number;
  /** Every request, in order of arrival. */
  seen: SeenRequest[];
  /** `http://<name>:<port><path>`: the server under a name the test's resolver maps to 127.0.0.1. */
  url(name: string, path: string): string;
  stop(): void;
}

/** A plain-http Bun server on 127.0.0.1 that records each request before `handler` answers it. */
export function serveLoopback(handler: (req: Request, url: URL) => Response | Promise<Response>): LoopbackServer {
  const seen: SeenRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      const h = req.headers;
      seen.push({ path: url.pathname + url.search, host: h.get("host"), userAgent: h.get("user-agent"), acceptEncoding: h.get("accept-encoding") });
      return handler(req, url);
    },
  });
  const port = server.port!;
  return { port, seen, url: (name, path) => `http://${name}:${port}${path}`, stop: () => void server.stop(true) };
}

/** The FetchRefusal a fetch ended in, as { reason, message }; fails when it succeeded or threw anything else. */
export async function refusal(work: Promise<unknown>): Promise<{ reason: string; message: string }> {
  try {
    await work;
  } catch (e) {
    if (e instanceof FetchRefusal) return { reason: e.reason, message: e.message };
    throw e;
  }
  throw new Error("expected a FetchRefusal, but the fetch succeeded");
}

/**
 * The loopback servers and guarded nets one test file makes: `release` (its afterEach) stops the servers and fails
 * the test if any net was asked for an address outside loopback, whatever the test itself asserted.
 */
export function loopbackScope() {
  const servers: LoopbackServer[] = [];
  const nets: LoopbackNet[] = [];
  return {
    server(handler: Parameters<typeof serveLoopback>[0]): LoopbackServer {
      const s = serveLoopback(handler);
      servers.push(s);
      return s;
    },
    net(names: Record<string, string[]> = {}, connect?: Connector): LoopbackNet {
      const n = loopbackNet(names, connect);
      nets.push(n);
      return n;
    },
    release(): void {
      for (const s of servers.splice(0)) s.stop();
      const violations = nets.splice(0).flatMap((n) => n.violations);
      if (violations.length) throw new Error(`a connection outside loopback was attempted: ${violations.join(", ")}`);
    },
  };
}
