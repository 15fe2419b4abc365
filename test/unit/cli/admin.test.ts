import { describe, expect, test } from "bun:test";
import { keysCommand, teamsCommand } from "../../../src/cli/admin.ts";
import { ensureFirstKey } from "../../../src/cli/first-run.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { authenticate, LAST_USED_RESOLUTION_S } from "../../../src/auth/authenticate.ts";
import { listKeys } from "../../../src/db/keys-repo.ts";
import { tempDir } from "../../helpers/kiln.ts";

const KEY_RE = /LLM\|\d+\|[A-Za-z0-9]{40}/;

describe("operator CLI", () => {
  test("first start creates team default and prints its key once; never again", async () => {
    const db = await openDatabase(tempDir());
    let printed = "";
    expect(await ensureFirstKey(db, (t) => (printed += t))).not.toBeNull();
    const key = printed.match(KEY_RE)![0];
    expect((await authenticate(db, new Headers({ authorization: `Bearer ${key}` }))).teamId).toBe(1);
    let again = "";
    expect(await ensureFirstKey(db, (t) => (again += t))).toBeNull();
    expect(again).toBe("");
  });

  test("teams create/list, keys create/list/revoke", async () => {
    const db = await openDatabase(tempDir());
    const out: string[] = [];
    const say = (l: string) => out.push(l);
    expect(await teamsCommand(db, ["create", "research"], say)).toBe(0);
    expect(await teamsCommand(db, ["create", "research"], say)).toBe(1);
    expect(await keysCommand(db, ["create", "--team", "nobody", "--name", "x"], say)).toBe(1);
    expect(await keysCommand(db, ["create", "--team", "research", "--name", "ci"], say)).toBe(0);
    const key = out.join("\n").match(KEY_RE)![0];
    out.length = 0;
    expect(await keysCommand(db, ["list"], say)).toBe(0);
    expect(out[0]).toContain("ci");
    expect(out[0]).toContain("active");
    expect(out[0]).not.toContain(key.split("|")[2]!);
    const id = key.split("|")[1]!;
    expect(await keysCommand(db, ["revoke", id], say)).toBe(0);
    expect(await keysCommand(db, ["revoke", id], say)).toBe(1);
    await expect(authenticate(db, new Headers({ "x-api-key": key }))).rejects.toThrow("Unauthorized");
    expect(await keysCommand(db, ["bogus"], say)).toBe(2);
  });

  test("authentication records when a key was last used, at most once a minute", async () => {
    const db = await openDatabase(tempDir());
    const out: string[] = [];
    expect(await teamsCommand(db, ["create", "ops"], () => {})).toBe(0);
    expect(await keysCommand(db, ["create", "--team", "ops", "--name", "bot"], (l) => out.push(l))).toBe(0);
    const key = out.join("\n").match(KEY_RE)![0];
    const id = Number(key.split("|")[1]);
    const lastUsed = async () => (await listKeys(db)).find((k) => k.id === id)!.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    const headers = new Headers({ authorization: `Bearer ${key}` });
    await authenticate(db, headers, 1_000_000);
    expect(await lastUsed()).toBe(1_000_000);
    await authenticate(db, headers, 1_000_000 + LAST_USED_RESOLUTION_S - 1);
    expect(await lastUsed()).toBe(1_000_000);
    await authenticate(db, headers, 1_000_000 + LAST_USED_RESOLUTION_S);
    expect(await lastUsed()).toBe(1_000_000 + LAST_USED_RESOLUTION_S);
  });
});
