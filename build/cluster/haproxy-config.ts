// haproxy's configuration in front of kiln replicas: health from /v1/status, the client named in X-Forwarded-For, and
// retries only of connections that failed before a request was sent.

export interface Replica {
  name: string;
  host: string;
  port: number;
}

export interface HaproxyOptions {
  /** Where clients connect. */
  bind: { host: string; port: number };
  replicas: readonly Replica[];
}

/** Health checks every CHECK_INTER_MS; CHECK_FALL failed ones in a row take a replica out. */
const CHECK_INTER_MS = 500;
const CHECK_FALL = 2;
/**
 * What a replica behind this configuration sets as KILN_DRAIN_NOTICE_MS: after SIGTERM it says is_alive false yet
 * serves new requests for longer than haproxy takes to see that (CHECK_FALL checks, the first up to a whole interval
 * away), so no request reaches it once it refuses them.
 */
export const DRAIN_NOTICE_MS = CHECK_INTER_MS * (CHECK_FALL + 1) + 500;

/**
 * The configuration the README shows and `npm run cluster` runs. What each part is for:
 * - The health check reads GET /v1/status (HTTP/1.1 with a Host: kiln's HTTP server refuses a request without one),
 *   which kiln answers without a key, and expects `"is_alive":true`. A kiln that got SIGTERM says `is_alive: false`
 *   there at once, while it still serves new requests for its drain notice (DRAIN_NOTICE_MS), so haproxy stops
 *   sending it requests within `fall` checks, before it answers any with 503 `server_shutting_down`; its running
 *   requests and streams go on to their end.
 * - Retries: only a connection that failed before the request was sent (`retry-on conn-failure`: a replica that
 *   exited refuses it) is tried again, on another replica (`option redispatch`). A request that reached a replica is
 *   never replayed: not a 503 (an overloaded replica's refusal, replayed, would take an RPM token on each replica), not
 *   an empty response (a POST with `background: true` may have been created before the connection closed).
 * - `option forwardfor` names the client in X-Forwarded-For, after dropping whatever the client sent there, so kiln
 *   (with haproxy's address in KILN_TRUSTED_PROXIES) limits sign-ins per client, not per proxy; and a forwarded
 *   request is not a loopback one for /metrics, which then needs its token.
 * - Streams (SSE) and long generations run minutes: the client and server timeouts allow 15.
 * - `leastconn` suits requests that run from milliseconds to minutes. Each replica's prefix cache is its own, so a
 *   conversation whose turns land on different replicas recomputes its history there; see the README.
 */
export function haproxyConfig(o: HaproxyOptions): string {
  if (o.replicas.length === 0) throw new Error("haproxy needs at least one replica");
  const servers = o.replicas.map((r) => `    server ${r.name} ${r.host}:${r.port} check`);
  return [
    "global",
    "    maxconn 4096",
    "",
    "defaults",
    "    mode http",
    "    timeout connect 2s",
    "    timeout client 15m",
    "    timeout server 15m",
    "    timeout http-request 30s",
    "    timeout queue 30s",
    "    option http-buffer-request",
    "    option forwardfor",
    "    retries 3",
    "    option redispatch 1",
    "    retry-on conn-failure",
    "",
    "frontend kiln",
    `    bind ${o.bind.host}:${o.bind.port}`,
    "    http-request del-header X-Forwarded-For",
    "    default_backend kiln_replicas",
    "",
    "backend kiln_replicas",
    "    balance leastconn",
    "    option httpchk",
    "    http-check send meth GET uri /v1/status ver HTTP/1.1 hdr Host kiln",
    // Single quotes: haproxy would take double quotes as its own.
    `    http-check expect rstring '"is_alive":\\s*true'`,
    `    default-server inter ${CHECK_INTER_MS}ms fall ${CHECK_FALL} rise 2`,
    ...servers,
    "",
  ].join("\n");
}
