// The network a remote media fetch uses, injectable so tests can see every address before it is contacted: a
// resolver (name → addresses) and a connector that sends one GET to an address already vetted, never to a name.
import { lookup } from "node:dns/promises";

/** The addresses (IPv4 and/or IPv6) a host name resolves to. */
export type Resolver = (hostname: string) => Promise<string[]>;

export interface ConnectRequest {
  /** The URL being fetched; its hostname goes in the Host header and TLS SNI, never to DNS. */
  url: URL;
  /** The vetted address to connect to. */
  address: string;
  port: number;
  headers: Record<string, string>;
  signal: AbortSignal;
}

/** Sends ONE HTTP GET to `address` (no redirects followed) and answers with its response, body unread. */
export type Connector = (req: ConnectRequest) => Promise<Response>;

export interface Net {
  resolve: Resolver;
  connect: Connector;
}

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address of both families. */
export const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * A connector over Bun's fetch: the URL's host is swapped for the address, while the Host header, TLS SNI and the
 * certificate check keep the name. `ca` replaces the system roots (tests pass their self-signed certificate).
 */
export function directConnector(opts: { ca?: string | string[] } = {}): Connector {
  return ({ url, address, port, headers, signal }) => {
    const target = new URL(url.href);
    target.hostname = address.includes(":") ? `[${address}]` : address;
    target.port = String(port);
    return fetch(target, {
      method: "GET",
      headers,
      signal,
      redirect: "manual",
      // A proxy from the environment would connect somewhere other than the vetted address.
      proxy: false,
      // A pooled connection may have been verified for another name on the same address.
      keepalive: false,
      // Explicit, so NODE_TLS_REJECT_UNAUTHORIZED cannot turn the certificate check off.
      tls: { rejectUnauthorized: true, serverName: url.hostname, ...(opts.ca ? { ca: opts.ca } : {}) },
    });
  };
}

/** Real DNS and direct connections. */
export const defaultNet: Net = { resolve: systemResolver, connect: directConnector() };
