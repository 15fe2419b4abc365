// The fetch policy's configuration: KILN_FETCH_* options, the allow-list's host patterns, and the policy built from them.
import { describe, expect, test } from "bun:test";
import { version } from "../../../package.json" with { type: "json" };
import { ConfigError, loadConfig } from "../../../src/config.ts";
import { fetchPolicyFromConfig } from "../../../src/media/fetch-policy.ts";
import { hostAllowed, parseHostPatterns } from "../../../src/media/host-patterns.ts";

describe("KILN_FETCH_* options", () => {
  test("defaults: any public host, 10 s, 50 MiB, 5 redirects, robots.txt honoured, loopback shut", () => {
    const policy = fetchPolicyFromConfig(loadConfig({}, []));
    expect(policy).toEqual({
      allowList: [], timeoutMs: 10_000, maxBytes: 50_000_000, maxRedirects: 5, robots: true, userAgent: `kiln/${version}`,
    });
    expect(policy.allowLoopback).toBeUndefined();
  });

  test("environment and flags set each one", () => {
    const c = loadConfig(
      { KILN_FETCH_ALLOW: " Images.Example.com, *.cdn.example.org. ", KILN_FETCH_TIMEOUT_MS: "2500", KILN_FETCH_ROBOTS: "off" },
      ["--fetch-max-bytes", "2048", "--fetch-max-redirects=0"],
    );
    expect(fetchPolicyFromConfig(c)).toMatchObject({
      allowList: ["images.example.com", "*.cdn.example.org"], timeoutMs: 2500, maxBytes: 2048, maxRedirects: 0, robots: false,
    });
  });

  test("bad values name the option", () => {
    expect(() => loadConfig({ KILN_FETCH_ALLOW: " , " }, [])).toThrow(new ConfigError("KILN_FETCH_ALLOW must list at least one host pattern (unset it to allow any public host)"));
    expect(() => loadConfig({ KILN_FETCH_ALLOW: "a.com,b.com:8080" }, [])).toThrow('KILN_FETCH_ALLOW "b.com:8080" is not a host pattern');
    expect(() => loadConfig({ KILN_FETCH_TIMEOUT_MS: "50" }, [])).toThrow("KILN_FETCH_TIMEOUT_MS must be between 100 and 300000");
    expect(() => loadConfig({}, ["--fetch-max-redirects", "21"])).toThrow("--fetch-max-redirects must be between 0 and 20");
    expect(() => loadConfig({ KILN_FETCH_ROBOTS: "maybe" }, [])).toThrow("KILN_FETCH_ROBOTS must be 1 or 0");
  });
});

describe("host patterns", () => {
  test("parsing normalises case, trailing dots and IDN, and refuses anything but a bare host", () => {
    expect(parseHostPatterns("A.Example.COM,*.Cdn.Example.org.,bücher.example,[::1],203.0.113.5")).toEqual([
      "a.example.com", "*.cdn.example.org", "xn--bcher-kva.example", "[::1]", "203.0.113.5",
    ]);
    for (const bad of ["a.com/path", "user@a.com", "*.*.a.com", "a*.com", "*", "a.com:80", "a.com?x"]) {
      expect(() => parseHostPatterns(bad)).toThrow(`"${bad}" is not a host pattern`);
    }
  });

  test("matching: exact names, `*.` for subdomains only, case and trailing dot ignored, empty list allows all", () => {
    const list = parseHostPatterns("images.example.com,*.cdn.example.org");
    const cases: [string, boolean][] = [
      ["images.example.com", true],
      ["IMAGES.example.com.", true],
      ["x.images.example.com", false],
      ["a.cdn.example.org", true],
      ["a.b.cdn.example.org", true],
      ["cdn.example.org", false],
      ["evilcdn.example.org", false],
      ["example.com", false],
    ];
    expect(cases.map(([h]) => [h, hostAllowed(list, h)])).toEqual(cases);
    expect(hostAllowed([], "anything.example")).toBe(true);
  });
});
