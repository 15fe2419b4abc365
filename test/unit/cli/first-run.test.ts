import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureFirstKey, FirstKeyFileError } from "../../../src/cli/first-run.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { countTeams } from "../../../src/db/teams-repo.ts";
import { tempDir } from "../../helpers/kiln.ts";

const KEY_RE = /LLM\|\d+\|[A-Za-z0-9]{40}/;

describe("the first key", () => {
  test("printed: the banner says where it goes and that the log never has it", async () => {
    let printed = "";
    await ensureFirstKey(await openDatabase(tempDir()), (t) => (printed += t));
    expect(printed).toMatch(KEY_RE);
    expect(printed).toContain("standard output");
    expect(printed).toContain("KILN_FIRST_KEY_FILE");
  });

  test("to a file: mode 0600, only the path is printed", async () => {
    const file = join(tempDir(), "first-key");
    let printed = "";
    await ensureFirstKey(await openDatabase(tempDir()), (t) => (printed += t), file);
    expect(readFileSync(file, "utf8")).toMatch(KEY_RE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(printed).not.toMatch(KEY_RE);
    expect(printed).toContain(file);
  });

  test("an existing file is never overwritten, and then no key is created", async () => {
    const file = join(tempDir(), "taken");
    writeFileSync(file, "mine");
    const db = await openDatabase(tempDir());
    await expect(ensureFirstKey(db, () => {}, file)).rejects.toThrow(FirstKeyFileError);
    expect(readFileSync(file, "utf8")).toBe("mine");
    expect(await countTeams(db)).toBe(0);
    expect(existsSync(file)).toBe(true);
  });
});
