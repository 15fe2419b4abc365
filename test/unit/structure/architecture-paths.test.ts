// ARCHITECTURE.md names files and folders as they are: a name it cites that no longer exists (a file moved or
// renamed without the map) fails here. A name stands for any path ending with it (`stored.ts` under the Responses
// folder's paragraph), `*` for part of a name and `<family>` for one folder; one starting at a top folder must exist there.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..", "..");
const TOPS = ["src", "workers", "test", "build"];
const SOURCE = /\.(ts|mts|mjs|js)$/;

/** The file and folder names a page cites: in backticks or bold, one word with a source ending or a slash. */
function citedPaths(markdown: string): string[] {
  const names = [...markdown.matchAll(/`([^`\s]+)`|\*\*([^*\s]+)\*\*/g)].map((m) => m[1] ?? m[2]!);
  const bare = [...markdown.matchAll(/(?<![\w/.-])((?:src|workers|test|build)\/[\w./<>*-]*)/g)].map((m) => m[1]!);
  const cited = [...names, ...bare].filter((n) => !n.startsWith("/") && !n.includes("://") && (SOURCE.test(n) || n.includes("/")));
  return [...new Set(cited)];
}

/** Every file and folder under the top folders, as repo paths (folders end with a slash). */
function treePaths(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name.startsWith(".")) continue;
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        out.push(`${path}/`);
        walk(path);
      } else out.push(path);
    }
  };
  for (const top of TOPS) {
    out.push(`${top}/`);
    walk(top);
  }
  return out;
}

/** The cited names no path in `tree` answers to. */
function missingPaths(cited: readonly string[], tree: readonly string[]): string[] {
  return cited.filter((name) => {
    const pattern = name
      .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, "[^/]*")
      .replace(/<[\w-]+>/g, "[^/]+");
    const anchored = TOPS.some((top) => name.startsWith(`${top}/`));
    // A folder may be cited with or without its slash.
    const re = new RegExp(`${anchored ? "^" : "(^|/)"}${pattern}${name.endsWith("/") || SOURCE.test(name) ? "" : "/?"}$`);
    return !tree.some((path) => re.test(path));
  });
}

test("the citations are read from backticks, bold and bare top-folder paths; commands, URLs and words are not", () => {
  const page = "`a/b.ts` and **c-d.ts**, `fetch-*.ts`, src/api/<family>/, `POST /v1/x`, `/v1/y`, `schema`, `http://h/x`";
  expect(citedPaths(page)).toEqual(["a/b.ts", "c-d.ts", "fetch-*.ts", "src/api/<family>/"]);
});

test("a cited name is found by its ending, with wildcards; one from a top folder only there", () => {
  const tree = ["src/", "src/api/", "src/api/chat/", "src/api/chat/routes.ts", "src/media/fetch-policy.ts", "workers/engine/engine.ts"];
  const cited = ["chat/routes.ts", "fetch-*.ts", "src/api/<family>/", "engine/engine.ts", "src/engine.ts", "gone.ts", "api/chat", "api/files/"];
  expect(missingPaths(cited, tree)).toEqual(["src/engine.ts", "gone.ts", "api/files/"]);
});

test("every file and folder ARCHITECTURE.md names exists", () => {
  const cited = citedPaths(readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8"));
  // the page was really read (an empty list would pass trivially)
  expect(cited.length).toBeGreaterThan(100);
  expect(missingPaths(cited, treePaths())).toEqual([]);
});
