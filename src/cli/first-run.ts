// On the first start with an empty database: create team "default" and one key, and hand the key over once:
// printed on standard output (never to the log, which is stderr), or written to a mode-0600 file whose path is printed.
import { writeFileSync } from "node:fs";
import type { Db } from "../db/client.ts";
import { createFirstTeam } from "../db/teams-repo.ts";

export class FirstKeyFileError extends Error {}

/**
 * Returns the printed banner (also written to `out`), or null when the database already had a team. With `keyFile`,
 * the key goes only to that new file (created with mode 0600; an existing file is never overwritten) and the banner
 * names the file. If the file cannot be written, nothing is created and start-up fails.
 */
export async function ensureFirstKey(db: Db, out: (text: string) => void = (t) => process.stdout.write(t), keyFile?: string): Promise<string | null> {
  // The file is written inside the transaction that creates the key: if it cannot be, neither team nor key remains.
  const created = await createFirstTeam(db, "default", "first key", (key) => {
    if (!keyFile) return;
    try {
      writeFileSync(keyFile, `${key.key}\n`, { mode: 0o600, flag: "wx" });
    } catch (e) {
      const reason = (e as NodeJS.ErrnoException).code === "EEXIST" ? "it already exists" : (e as Error).message;
      throw new FirstKeyFileError(`cannot write the first API key to ${keyFile}: ${reason}`);
    }
  });
  if (!created) return null;
  const rule = "─".repeat(72);
  const shown = keyFile
    ? [` It was written to ${keyFile} (mode 0600) and is not shown here.`, " Move it somewhere safe; `kiln keys create` makes more."]
    : [
        " It is shown only this once, here on standard output; kiln never writes keys to its log (stderr).",
        " If this output is captured (journald, docker logs), the key is in that capture: set KILN_FIRST_KEY_FILE",
        " to have it written to a file instead. Store it now; `kiln keys create` makes more.",
        "",
        `   ${created.key}`,
      ];
  const dashboard = [
    "",
    " The dashboard (/dashboard on this server) has no accounts yet. Set the operator's password with:",
    "",
    "   kiln users add admin --operator        (it reads the password from standard input)",
    "",
    " and give each team's people their own: kiln users add <name> --team <team>.",
  ];
  const banner = [rule, ` kiln: created team "default" and its first API key (id ${created.id}).`, ...shown, ...dashboard, "", rule, ""].join("\n");
  out(banner);
  return banner;
}
