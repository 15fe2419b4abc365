// Uploaded files' rows, and dashboard accounts with their sessions: on every dialect.
import { describe, expect, test } from "bun:test";
import { deleteSession, insertSession, liveSession } from "../../../src/db/dashboard-sessions-repo.ts";
import { countOperators, createUser, deleteUser, findUser, findUserById, listUsers, recordLogin, setPassword } from "../../../src/db/dashboard-users-repo.ts";
import { deleteFile, fileExists, findFile, insertFile, pageFiles } from "../../../src/db/files-repo.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { DIALECTS } from "../../helpers/databases.ts";

const fileId = (n: number) => `file-${n.toString(16).padStart(32, "0")}`;

describe.each(DIALECTS)("files ($name)", (dialect) => {
  test("rows are the owning team's; pages go by creation time then upload order, after a cursor, by purpose", async () => {
    const { db, close } = await dialect.open();
    const team = await createTeam(db, "t");
    const other = await createTeam(db, "o");
    const key = await createKey(db, team.id, "k");
    const otherKey = await createKey(db, other.id, "k");
    const add = (n: number, createdAt: number, purpose = "user_data", teamId = team.id, keyId = key.id) =>
      insertFile(db, { id: fileId(n), teamId, keyId, filename: `f${n}.txt`, purpose, bytes: n, createdAt });
    expect(await add(1, 100)).toMatchObject({ id: fileId(1), status: "processed", bytes: 1, createdAt: 100 });
    await add(2, 100, "vision");
    await add(3, 101);
    await add(4, 99, "user_data", other.id, otherKey.id);
    expect((await findFile(db, fileId(1), team.id))?.filename).toBe("f1.txt");
    expect(await findFile(db, fileId(4), team.id)).toBeUndefined();
    const ids = async (q: Partial<Parameters<typeof pageFiles>[2]>) => {
      const page = await pageFiles(db, team.id, { order: "desc", after: null, limit: 10, purpose: null, ...q });
      return page && { ids: page.rows.map((r) => r.id), hasMore: page.hasMore };
    };
    expect(await ids({})).toEqual({ ids: [fileId(3), fileId(2), fileId(1)], hasMore: false });
    expect(await ids({ order: "asc", limit: 2 })).toEqual({ ids: [fileId(1), fileId(2)], hasMore: true });
    expect(await ids({ order: "asc", after: fileId(2) })).toEqual({ ids: [fileId(3)], hasMore: false });
    expect(await ids({ after: fileId(2) })).toEqual({ ids: [fileId(1)], hasMore: false });
    expect(await ids({ purpose: "vision" })).toEqual({ ids: [fileId(2)], hasMore: false });
    expect(await ids({ after: fileId(4) })).toBeNull();
    // Any team's file: the start-up sweep keeps its bytes.
    expect(await fileExists(db, fileId(4))).toBe(true);
    expect(await fileExists(db, fileId(5))).toBe(false);
    expect(await deleteFile(db, fileId(1), other.id)).toBe(false);
    expect(await deleteFile(db, fileId(1), team.id)).toBe(true);
    expect(await deleteFile(db, fileId(1), team.id)).toBe(false);
    await expect(add(2, 100)).rejects.toThrow(dialect.duplicate("files", "id"));
    await close();
  });
});

describe.each(DIALECTS)("dashboard users and sessions ($name)", (dialect) => {
  test("accounts: unique names, listed with their team, operators counted; removing one ends its sessions", async () => {
    const { db, count, close } = await dialect.open();
    const team = await createTeam(db, "acme");
    const op = await createUser(db, { username: "root", passwordHash: "h1", role: "operator", teamId: null });
    const member = await createUser(db, { username: "ann", passwordHash: "h2", role: "member", teamId: team.id });
    await expect(createUser(db, { username: "ann", passwordHash: "h", role: "member", teamId: null })).rejects.toThrow(dialect.duplicate("dashboard_users", "username"));
    expect(await findUser(db, "root")).toEqual(op);
    expect(await findUserById(db, member.id)).toEqual(member);
    expect(await findUser(db, "nobody")).toBeUndefined();
    expect((await listUsers(db)).map((u) => [u.username, u.team])).toEqual([["ann", "acme"], ["root", null]]);
    expect(await countOperators(db)).toBe(1);
    await recordLogin(db, member.id, 500);
    expect((await findUser(db, "ann"))?.lastLoginAt).toBe(500);
    await insertSession(db, { tokenHash: "s1", userId: member.id, csrfToken: "c", createdAt: 1000, expiresAt: 2000 });
    expect(await deleteUser(db, member.id)).toBe(true);
    expect(await deleteUser(db, member.id)).toBe(false);
    expect(await count("dashboard_sessions")).toBe(0);
    await close();
  });

  test("sessions: live until they expire, swept when a new one starts, ended one by one or all by a new password", async () => {
    const { db, count, close } = await dialect.open();
    const user = await createUser(db, { username: "ann", passwordHash: "h", role: "operator", teamId: null });
    const session = (tokenHash: string, createdAt: number, expiresAt: number) => ({ tokenHash, userId: user.id, csrfToken: `csrf-${tokenHash}`, createdAt, expiresAt });
    await insertSession(db, session("old", 100, 200));
    await insertSession(db, session("a", 300, 1000));
    expect(await count("dashboard_sessions")).toBe(1);
    expect(await liveSession(db, "a", 999)).toEqual({ session: session("a", 300, 1000), user });
    expect(await liveSession(db, "a", 1000)).toBeUndefined();
    await insertSession(db, session("b", 400, 1000));
    await deleteSession(db, "a");
    expect(await liveSession(db, "a", 500)).toBeUndefined();
    expect((await liveSession(db, "b", 500))?.session.tokenHash).toBe("b");
    await setPassword(db, user.id, "h2");
    expect(await liveSession(db, "b", 500)).toBeUndefined();
    expect((await findUser(db, "ann"))?.passwordHash).toBe("h2");
    await close();
  });
});
