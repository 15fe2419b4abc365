// `kiln users`: dashboard accounts from the CLI, with the password from standard input (a source passed in here).
import { describe, expect, test } from "bun:test";
import { ensureFirstKey } from "../../../src/cli/first-run.ts";
import { usersCommand } from "../../../src/cli/users.ts";
import { type Db, openDatabase } from "../../../src/db/client.ts";
import { findUser } from "../../../src/db/dashboard-users-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { passwordMatches } from "../../../src/dashboard/accounts/password.ts";
import { startSession } from "../../../src/dashboard/accounts/sessions.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { sqliteOf } from "../../helpers/databases.ts";

function run(db: Db, args: string[], password: string | null = "a long password 1") {
  const lines: string[] = [];
  const prompts: string[] = [];
  return usersCommand(db, args, (l) => lines.push(l), async (p) => (prompts.push(p), password)).then((code) => ({ code, out: lines.join("\n"), prompts }));
}

describe("kiln users", () => {
  test("add an operator and a member; the password is stored only as an argon2id hash", async () => {
    const db = await openDatabase(tempDir());
    await createTeam(db, "acme");
    const op = await run(db, ["add", "Admin", "--operator"]);
    expect(op.code).toBe(0);
    expect(op.out).toContain(`Created operator "admin" (sees every team)`);
    expect(op.prompts).toEqual(["Password for admin: "]);
    const member = await run(db, ["add", "bob", "--team", "acme"], "bob's long password");
    expect(member.out).toContain(`Created member "bob" of team "acme"`);
    const admin = (await findUser(db, "admin"))!;
    expect(admin.role).toBe("operator");
    expect(admin.teamId).toBeNull();
    expect(admin.passwordHash).toStartWith("$argon2id$");
    expect(await passwordMatches("a long password 1", admin.passwordHash)).toBe(true);
    const list = await run(db, ["list"]);
    expect(list.out).toMatch(/admin\s+operator\s+\(all teams\)/);
    expect(list.out).toMatch(/bob\s+member\s+acme/);
    expect(list.out).not.toContain("argon2");
  });

  test("refusals: unknown team, both or neither role, a short password, a taken or malformed name", async () => {
    const db = await openDatabase(tempDir());
    await createTeam(db, "acme");
    expect((await run(db, ["add", "x", "--team", "nope"])).out).toContain(`no team named "nope"`);
    expect((await run(db, ["add", "x", "--operator", "--team", "acme"])).code).toBe(2);
    expect((await run(db, ["add", "x"])).code).toBe(2);
    const short = await run(db, ["add", "x", "--operator"], "short");
    expect(short.code).toBe(2);
    expect(short.out).toContain("at least 12 characters");
    expect((await run(db, ["add", "x", "--operator"], null)).out).toContain("no password was given");
    expect(await findUser(db, "x")).toBeUndefined();
    await run(db, ["add", "x", "--operator"]);
    expect((await run(db, ["add", "X", "--operator"])).out).toContain("already exists");
    expect((await run(db, ["add", "bad name", "--operator"])).code).toBe(2);
  });

  test("passwd sets a new password and signs out the old sessions; remove deletes the account and its sessions", async () => {
    const db = await openDatabase(tempDir());
    await run(db, ["add", "carol", "--operator"]);
    const user = (await findUser(db, "carol"))!;
    await startSession(db, user.id);
    const changed = await run(db, ["passwd", "carol"], "another long password");
    expect(changed.code).toBe(0);
    expect(await passwordMatches("another long password", (await findUser(db, "carol"))!.passwordHash)).toBe(true);
    expect(sqliteOf(db).$client.query("SELECT count(*) AS n FROM dashboard_sessions").get()).toEqual({ n: 0 });
    await startSession(db, user.id);
    expect((await run(db, ["remove", "carol"])).code).toBe(0);
    expect(await findUser(db, "carol")).toBeUndefined();
    expect(sqliteOf(db).$client.query("SELECT count(*) AS n FROM dashboard_sessions").get()).toEqual({ n: 0 });
    expect((await run(db, ["passwd", "carol"])).code).toBe(1);
  });

  test("the first start says how to set the operator's password", async () => {
    let printed = "";
    await ensureFirstKey(await openDatabase(tempDir()), (t) => (printed += t));
    expect(printed).toContain("kiln users add admin --operator");
    expect(printed).toContain("/dashboard");
  });
});
