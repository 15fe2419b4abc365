// haproxy's configuration in front of kiln replicas: health from /v1/status, a draining replica's requests retried elsewhere.

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

/**
 * The configuration the README shows and `npm run cluster` runs. What each part is for:
 * - The health check reads GET /v1/status (HTTP/1.1 with a Host: kiln's HTTP server refuses a request without one),
 *   which kiln answers without a key, and expects `"is_alive":true`: a kiln
 *   that got SIGTERM says `is_alive: false` there while it drains, so haproxy stops sending it new requests within
 *   `fall` checks (two of 500 ms) while its running requests and streams go on to their end.
 * - In that window a request can still reach the draining replica, which answers 503 `server_shutting_down` with
 *   `Connection: close` before doing anything: `retry-on 503` with `option redispatch` replays it on another replica,
 *   as a connection refused by a replica that already exited is (`conn-failure`, `empty-response`). Replays need
 *   the request buffered (`option http-buffer-request`), which covers every JSON request; a body larger than
 *   haproxy's buffer (a big file upload) is not replayed, and its client sees the 503.
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
    "    retries 3",
    "    option redispatch 1",
    "    retry-on conn-failure empty-response 503",
    "",
    "frontend kiln",
    `    bind ${o.bind.host}:${o.bind.port}`,
    "    default_backend kiln_replicas",
    "",
    "backend kiln_replicas",
    "    balance leastconn",
    "    option httpchk",
    "    http-check send meth GET uri /v1/status ver HTTP/1.1 hdr Host kiln",
    // Single quotes: haproxy would take double quotes as its own.
    `    http-check expect rstring '"is_alive":\\s*true'`,
    "    default-server inter 500ms fall 2 rise 2",
    ...servers,
    "",
  ].join("\n");
}
