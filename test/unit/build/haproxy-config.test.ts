// The haproxy configuration in front of kiln replicas: one server line per replica, the health check and retry rules.
import { describe, expect, test } from "bun:test";
import { DRAIN_NOTICE_MS, haproxyConfig } from "../../../build/cluster/haproxy-config.ts";

const replicas = [1, 2, 3].map((i) => ({ name: `kiln${i}`, host: "127.0.0.1", port: 8080 + i }));

describe("haproxyConfig", () => {
  test("binds the frontend and lists every replica with a health check", () => {
    const cfg = haproxyConfig({ bind: { host: "127.0.0.1", port: 8080 }, replicas });
    expect(cfg).toContain("    bind 127.0.0.1:8080\n");
    expect(cfg.match(/^ {4}server .*$/gm)).toEqual(["    server kiln1 127.0.0.1:8081 check", "    server kiln2 127.0.0.1:8082 check", "    server kiln3 127.0.0.1:8083 check"]);
  });

  test("checks /v1/status for is_alive; retries only connections that failed before the request was sent", () => {
    const cfg = haproxyConfig({ bind: { host: "127.0.0.1", port: 8080 }, replicas });
    expect(cfg).toContain("http-check send meth GET uri /v1/status ver HTTP/1.1 hdr Host kiln");
    // The pattern matches kiln's status document while it serves, and not while it drains.
    // haproxy's single quotes pass the pattern on as it is written.
    const pattern = new RegExp(cfg.match(/http-check expect rstring '(.*)'$/m)![1]!);
    expect(pattern.test(JSON.stringify({ status: "operational", is_alive: true }))).toBe(true);
    expect(pattern.test(JSON.stringify({ status: "degraded", is_alive: false }))).toBe(false);
    // Never a 503 or an empty response: the request reached a replica, which may have acted on it.
    expect(cfg.match(/^ {4}retry-on .*$/gm)).toEqual(["    retry-on conn-failure"]);
    expect(cfg).toContain("option redispatch 1");
    expect(cfg).toContain("option http-buffer-request");
    // A replica drains only after haproxy's checks (fall × inter, the first up to an interval away) took it out.
    const [, inter, fall] = cfg.match(/default-server inter (\d+)ms fall (\d+)/)!;
    expect(DRAIN_NOTICE_MS).toBeGreaterThan(Number(inter) * (Number(fall) + 1));
  });

  test("names the client in X-Forwarded-For, dropping what the client wrote there", () => {
    const cfg = haproxyConfig({ bind: { host: "127.0.0.1", port: 8080 }, replicas });
    expect(cfg).toContain("    option forwardfor\n");
    expect(cfg).toContain("    http-request del-header X-Forwarded-For\n");
  });

  test("refuses an empty replica list", () => {
    expect(() => haproxyConfig({ bind: { host: "127.0.0.1", port: 8080 }, replicas: [] })).toThrow(/at least one replica/);
  });
});
