// `kiln users …`: dashboard accounts. An operator sees every team; a member (--team) sees only theirs. Passwords
// are read from standard input (one line; typed without echo at a terminal), never from the command line.
import { findTeamByName } from "../db/teams-repo.ts";
import type { Db } from "../db/client.ts";
import { createUser, deleteUser, findUser, listUsers, setPassword } from "../db/dashboard-users-repo.ts";
import { hashPassword, passwordProblem } from "../dashboard/accounts/password.ts";
import { normalUsername, USERNAME_RULE } from "../dashboard/accounts/usernames.ts";
import { noTeam, type Out, tryParse, usage } from "./access.ts";
import { formatTable } from "./table.ts";

const USAGE = "kiln users add <name> --operator | --team <team> · kiln users passwd <name> · kiln users list · kiln users remove <name>";
const fmtTime = (s: number | null) => (s === null ? "never" : new Date(s * 1000).toISOString().replace(".000", ""));

/** Reads the new password (the prompt names whose it is); null when none was given. */
export type PasswordSource = (prompt: string) => Promise<string | null>;

async function newPassword(read: PasswordSource, name: string, out: Out): Promise<string | null> {
  const password = await read(`Password for ${name}: `);
  const problem = password === null ? "no password was given on standard input" : passwordProblem(password);
  if (problem) {
    out(`kiln: ${problem}`);
    return null;
  }
  return password;
}

export async function usersCommand(db: Db, args: string[], out: Out, read: PasswordSource): Promise<number> {
  const [sub, rawName, ...rest] = args;
  if (sub === "list") {
    const rows = (await listUsers(db)).map((u) => [u.username, u.role, u.team ?? (u.role === "operator" ? "(all teams)" : "-"), fmtTime(u.createdAt), fmtTime(u.lastLoginAt)]);
    out(rows.length ? formatTable(["user", "role", "team", "created", "last sign-in"], rows) : "No dashboard users yet: kiln users add <name> --operator");
    return 0;
  }
  if (!rawName || !["add", "passwd", "remove"].includes(sub ?? "")) return usage(out, USAGE);
  const name = normalUsername(rawName);
  if (!name) {
    out(`kiln: ${USERNAME_RULE}`);
    return 2;
  }
  if (sub === "add") {
    const values = tryParse(rest, { operator: { type: "boolean" }, team: { type: "string" } })?.values;
    if (!values || Boolean(values.operator) === (values.team !== undefined)) return usage(out, "kiln users add <name> --operator | --team <team>   (the password is read from standard input)");
    const team = values.team !== undefined ? await findTeamByName(db, values.team) : null;
    if (values.team !== undefined && !team) return noTeam(out, values.team);
    if (await findUser(db, name)) {
      out(`kiln: user "${name}" already exists (kiln users passwd ${name} sets a new password)`);
      return 1;
    }
    const password = await newPassword(read, name, out);
    if (password === null) return 2;
    const role = values.operator ? "operator" : "member";
    await createUser(db, { username: name, passwordHash: await hashPassword(password), role, teamId: team?.id ?? null });
    out(`Created ${role} "${name}"${team ? ` of team "${team.name}"` : " (sees every team)"}. Sign in at /dashboard.`);
    return 0;
  }
  const user = await findUser(db, name);
  if (!user) {
    out(`kiln: no dashboard user "${name}" (kiln users list shows them)`);
    return 1;
  }
  if (sub === "remove") {
    await deleteUser(db, user.id);
    out(`Removed user "${name}"; their sessions are signed out.`);
    return 0;
  }
  const password = await newPassword(read, name, out);
  if (password === null) return 2;
  await setPassword(db, user.id, await hashPassword(password));
  out(`New password set for "${name}"; their other sessions are signed out.`);
  return 0;
}

/** The first line of standard input; at a terminal, typed after `prompt` without echo. Null at end of input. */
export async function passwordFromStdin(prompt: string): Promise<string | null> {
  const tty = process.stdin.isTTY;
  if (tty) {
    process.stderr.write(prompt);
    Bun.spawnSync(["stty", "-echo"], { stdin: "inherit" });
  }
  try {
    for await (const line of console) return line.replace(/\r$/, "");
    return null;
  } finally {
    if (tty) {
      Bun.spawnSync(["stty", "echo"], { stdin: "inherit" });
      process.stderr.write("\n");
    }
  }
}
