// The robots.txt parser and matcher (RFC 9309) and the per-origin cache the fetch policy keeps.
import { describe, expect, test } from "bun:test";
import { checkRobots, RobotsCache } from "../../../src/media/fetch-robots.ts";
import { isAllowed, parseRobots, productToken, rulesFor } from "../../../src/media/robots.ts";

/** Whether `token` may fetch `path` under `text`. */
const allows = (text: string, token: string, path: string) => isAllowed(rulesFor(parseRobots(text), token), path);

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

  test("a pathological pattern against a long path answers quickly (no exponential backtracking)", () => {
    const pattern = `/${"*a".repeat(40)}$`;
    const path = `/${"a".repeat(5000)}b`;
    const t0 = performance.now();
    expect(allows(`User-agent: *\nDisallow: ${pattern}\n`, "kiln", path)).toBe(true);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe("RobotsCache", () => {
  test("keeps an origin's groups for its time to live, then forgets them", () => {
    const cache = new RobotsCache(1000, 10);
    const groups = parseRobots("User-agent: *\nDisallow: /\n");
    cache.set("http://a.test", groups, 5000);
    expect(cache.get("http://a.test", 5999)).toBe(groups);
    expect(cache.get("http://b.test", 5999)).toBeUndefined();
    expect(cache.get("http://a.test", 6000)).toBeUndefined();
  });

  test("holds at most its number of origins, dropping the oldest", () => {
    const cache = new RobotsCache(60_000, 2);
    for (const o of ["http://1.test", "http://2.test", "http://3.test"]) cache.set(o, [], 0);
    expect(["http://1.test", "http://2.test", "http://3.test"].map((o) => cache.get(o, 1) !== undefined)).toEqual([false, true, true]);
  });
});

describe("checkRobots", () => {
  test("reads an origin's robots.txt once per time to live: a use of the cached file does not extend it", async () => {
    const cache = new RobotsCache(1000, 10);
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
