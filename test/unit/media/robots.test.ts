// The robots.txt parser and matcher (RFC 9309) and the per-origin cache the fetch policy keeps.
import { describe, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { cachedBytes, checkRobots, ROBOTS_CACHE_BYTES, RobotsCache } from "../../../src/media/fetch-robots.ts";
import { MATCH_STEP_BUDGET, parseRobots, productToken, robotsVerdict, rulesFor } from "../../../src/media/robots.ts";

/** What `text` says of `token` fetching `path`. */
const verdict = (text: string, token: string, path: string, budget?: number) => robotsVerdict(rulesFor(parseRobots(text), token), path, budget);
/** Whether `token` may fetch `path` under `text`. */
const allows = (text: string, token: string, path: string) => verdict(text, token, path) === "allowed";

describe("parseRobots", () => {
  test("groups: consecutive user-agent lines share one; rules before any group, comments, unknown lines skipped", () => {
    const text = [
      "\uFEFFDisallow: /orphan",
      "# a comment",
      "User-Agent: Kiln/1.0 # trailing comment",
      "user-agent: other",
      "Disallow: /a",
      "Sitemap: https://example.com/sitemap.xml",
      "Crawl-delay: 10",
      "allow:/a/b",
      "junk line without colon",
      "user-agent: *",
      "disallow:",
      "",
    ].join("\r\n");
    expect(parseRobots(text)).toEqual([
      { agents: ["kiln", "other"], rules: [{ allow: false, pattern: "/a" }, { allow: true, pattern: "/a/b" }] },
      { agents: ["*"], rules: [] },
    ]);
  });

  test("a user-agent line after rules starts a new group", () => {
    const groups = parseRobots("User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n");
    expect(groups.map((g) => g.agents)).toEqual([["a"], ["b"]]);
  });
});

describe("rulesFor", () => {
  const text = "User-agent: *\nDisallow: /star\n\nUser-agent: kiln\nDisallow: /k1\n\nUser-agent: other\nDisallow: /o\n\nuser-agent: KILN\nDisallow: /k2\n";

  test("every group naming the token (case-insensitive) combines; `*` is ignored then", () => {
    expect(rulesFor(parseRobots(text), "kiln").map((r) => r.pattern)).toEqual(["/k1", "/k2"]);
    expect(allows(text, "kiln", "/star")).toBe(true);
  });

  test("a token no group names gets the `*` groups; no `*` group means no rules", () => {
    expect(rulesFor(parseRobots(text), "nobody").map((r) => r.pattern)).toEqual(["/star"]);
    expect(rulesFor(parseRobots("User-agent: x\nDisallow: /\n"), "kiln")).toEqual([]);
  });

  test("the product token of a User-Agent header is its leading name", () => {
    expect(productToken("kiln/0.1.0 (+https://example.com)")).toBe("kiln");
    expect(productToken("Kiln_Bot-2")).toBe("kiln_bot-");
  });
});

describe("isAllowed", () => {
  const cases: [string, string, boolean][] = [
    // [rules, path, allowed]
    ["Disallow: /", "/anything", false],
    ["Disallow: /private", "/private/x", false],
    ["Disallow: /private", "/privateer", false],
    ["Disallow: /private/", "/private", true],
    ["Disallow: /private\nAllow: /private/ok", "/private/ok.png", true],
    ["Disallow: /private\nAllow: /private/ok", "/private/no.png", false],
    // The longest match wins regardless of order.
    ["Allow: /p\nDisallow: /p/q", "/p/q/r", false],
    // A tie goes to Allow.
    ["Disallow: /page\nAllow: /page", "/page", true],
    ["Allow: /page\nDisallow: /page", "/page", true],
    // `*` is any run, `$` the end.
    ["Disallow: /*.png", "/img/a.png", false],
    ["Disallow: /*.png", "/img/a.png?x=1", false],
    ["Disallow: /*.png$", "/img/a.png?x=1", true],
    ["Disallow: /*.png$", "/img/a.png", false],
    ["Disallow: /a*b*c", "/a-x-b-y-c", false],
    ["Disallow: /a*b*c", "/a-x-c-y-b", true],
    ["Disallow: /exact$", "/exact/more", true],
    ["Disallow: /$", "/", false],
    ["Disallow: /$", "/x", true],
    ["Disallow: /**x", "/yx", false],
    // The query is part of what is matched.
    ["Disallow: /*?session=", "/img.png?session=1", false],
    // Percent-encoding: unreserved escapes decoded, others compared uppercased, UTF-8 encoded.
    ["Disallow: /%7Euser", "/~user/a.png", false],
    ["Disallow: /~user", "/%7euser/a.png", false],
    ["Disallow: /ä", "/%C3%A4/x", false],
    ["Disallow: /a%2fb", "/a%2Fb", false],
    ["Disallow: /a%2Fb", "/a/b", true],
    // An empty Disallow forbids nothing.
    ["Disallow:", "/x", true],
    ["", "/x", true],
  ];
  for (const [rules, path, allowed] of cases) {
    test(`${JSON.stringify(rules)} on ${path} → ${allowed ? "allowed" : "disallowed"}`, () => {
      expect(allows(`User-agent: kiln\n${rules}\n`, "kiln", path)).toBe(allowed);
    });
  }

  test("a pathological pattern against a long path is matched without exponential backtracking, within the budget", () => {
    const pattern = `/${"*a".repeat(40)}$`;
    expect(verdict(`User-agent: *\nDisallow: ${pattern}\n`, "kiln", `/${"a".repeat(5000)}b`)).toBe("allowed");
    expect(verdict(`User-agent: *\nDisallow: ${pattern}\n`, "kiln", `/${"a".repeat(5000)}`)).toBe("disallowed");
  });
});

describe("the matcher's step budget", () => {
  // A site controls both its robots.txt and the URLs it hands out: a long `*` pattern against a long path.
  const costly = `Disallow: /*${"a".repeat(5000)}b\n`;
  const longPath = `/${"a".repeat(8000)}`;

  test("one step per character looked at: `/*b` against `/` and n letters costs n + 2 steps", () => {
    const rules = "User-agent: *\nDisallow: /*b\n";
    expect(verdict(rules, "kiln", `/${"a".repeat(100)}`, 102)).toBe("allowed");
    expect(verdict(rules, "kiln", `/${"a".repeat(100)}`, 101)).toBe("too_costly");
    expect(verdict(rules, "kiln", `/${"a".repeat(100)}b`, 103)).toBe("disallowed");
  });

  test("a 5,000-character pattern against an 8,000-character path is too costly, and so is robots.txt's full 512 KiB of them", () => {
    expect(verdict(`User-agent: *\n${costly}`, "kiln", longPath)).toBe("too_costly");
    const full = `User-agent: *\n${costly.repeat(Math.floor((512 * 1024) / costly.length))}`;
    expect(full.length).toBeGreaterThan(500 * 1024);
    expect(verdict(full, "kiln", longPath)).toBe("too_costly");
  });

  test("the budget is shared by all the rules: each alone fits in a tenth of it, twenty together do not", () => {
    const rule = "Disallow: /*aaaaaaaaaab\n";
    expect(verdict(`User-agent: *\n${rule}`, "kiln", longPath, MATCH_STEP_BUDGET / 10)).toBe("allowed");
    expect(verdict(`User-agent: *\n${rule.repeat(20)}`, "kiln", longPath)).toBe("too_costly");
  });

  test("prefix rules cost their own length: a match stops at the pattern's end, not the path's", () => {
    const rules = `User-agent: *\nDisallow: /private\nAllow: /public\nAllow: /private/*\n`;
    // 9 steps for /private, 3 to see /public fail, 10 for /private/* (its last `*` ends the walk).
    expect(verdict(rules, "kiln", `/private/${"x".repeat(8000)}`, 22)).toBe("allowed");
    expect(verdict(rules, "kiln", `/private/${"x".repeat(8000)}`, 21)).toBe("too_costly");
  });

  test("checkRobots refuses a too costly path by name", async () => {
    const get = async () => new Response(`User-agent: *\n${costly}`);
    await expect(checkRobots(new URL(`http://a.test${longPath}`), "kiln/1", get, new RobotsCache(1000, 64 * 1024))).rejects.toThrow(
      `robots.txt at a.test has rules too costly to match against /${"a".repeat(199)}… (over ${MATCH_STEP_BUDGET} steps), which kiln reads as disallowing it`,
    );
  });
});

describe("RobotsCache", () => {
  const rules = (...patterns: string[]) => patterns.map((pattern) => ({ allow: false, pattern }));

  test("keeps a key's rules for its time to live, then forgets them", () => {
    const cache = new RobotsCache(1000, 64 * 1024);
    const kept = rules("/");
    cache.set("kiln http://a.test", kept, 5000);
    expect(cache.get("kiln http://a.test", 5999)).toBe(kept);
    expect(cache.get("kiln http://b.test", 5999)).toBeUndefined();
    expect(cache.get("kiln http://a.test", 6000)).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  test("holds at most its bytes, dropping the oldest; a key set again is counted once", () => {
    const big = rules("/".padEnd(1000, "x"));
    const each = cachedBytes("kiln http://1.test", big);
    const cache = new RobotsCache(60_000, 3 * each);
    const keys = [1, 2, 3, 4].map((n) => `kiln http://${n}.test`);
    for (const k of keys.slice(0, 3)) cache.set(k, big, 0);
    cache.set(keys[2]!, big, 0);
    expect(cache.bytes).toBe(3 * each);
    cache.set(keys[3]!, big, 0);
    expect(keys.map((k) => cache.get(k, 1) !== undefined)).toEqual([false, true, true, true]);
    expect(cache.bytes).toBe(3 * each);
  });

  test("rules larger than the whole bound are not kept, and push nothing out", () => {
    const cache = new RobotsCache(60_000, 4096);
    cache.set("kiln http://small.test", rules("/a"), 0);
    cache.set("kiln http://huge.test", rules("/".padEnd(5000, "x")), 0);
    expect([cache.get("kiln http://small.test", 1) !== undefined, cache.get("kiln http://huge.test", 1)]).toEqual([true, undefined]);
  });

  test(`an attacker's 1024 origins (one host, many ports) of 512 KiB rules each stay within ${ROBOTS_CACHE_BYTES} bytes`, () => {
    const cache = new RobotsCache(5 * 60_000, ROBOTS_CACHE_BYTES);
    const heavy = rules(...Array.from({ length: 512 }, (_, n) => `/${n}`.padEnd(1024, "x")));
    for (let port = 1; port <= 1024; port++) cache.set(`kiln http://evil.test:${port}`, heavy, 0);
    expect(cache.bytes).toBeLessThanOrEqual(ROBOTS_CACHE_BYTES);
    expect(cache.get("kiln http://evil.test:1", 1)).toBeUndefined();
    expect(cache.get("kiln http://evil.test:1024", 1)).toBe(heavy);
  });

  test("parsed rules do not pin the robots.txt they came from: 50 files of 512 KiB keep under 4 MiB (pinned, about 25)", () => {
    const kept: unknown[] = [];
    Bun.gc(true);
    const before = heapStats().heapSize;
    for (let k = 0; k < 50; k++) {
      const text = `User-agent: other\n${`Disallow: /x${k}${"y".repeat(200)}\n`.repeat(2500)}User-agent: kiln\nDisallow: /private-area-${k}-and-more\n`;
      kept.push(rulesFor(parseRobots(text), "kiln"));
    }
    Bun.gc(true);
    expect(kept).toHaveLength(50);
    expect(heapStats().heapSize - before).toBeLessThan(4 * 1024 * 1024);
  });
});

describe("checkRobots", () => {
  test("reads an origin's robots.txt once per time to live: a use of the cached file does not extend it", async () => {
    const cache = new RobotsCache(1000, 64 * 1024);
    const asked: string[] = [];
    const get = async (u: URL) => {
      asked.push(u.href);
      return new Response("User-agent: kiln\nDisallow: /no\n");
    };
    let clock = 0;
    const check = (path: string) => checkRobots(new URL(`http://a.test${path}`), "kiln/1", get, cache, () => clock);
    await check("/yes");
    clock = 999;
    await check("/yes");
    await expect(check("/no")).rejects.toThrow("robots.txt at a.test disallows /no");
    clock = 1000;
    await check("/yes");
    expect(asked).toEqual(["http://a.test/robots.txt", "http://a.test/robots.txt"]);
  });
});
