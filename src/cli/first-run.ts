// On the first start with an empty database: create team "default" and one key, and show the key once.
import type { Db } from "../db/client.ts";
import { createKey } from "../db/keys-repo.ts";
import { countTeams, createTeam } from "../db/teams-repo.ts";

/** Returns the printed banner (also written to `out`), or null when the database already had a team. */
export function ensureFirstKey(db: Db, out: (text: string) => void = (t) => process.stdout.write(t)): string | null {
  const created = db.transaction((tx) => {
    const txDb = tx as unknown as Db;
    if (countTeams(txDb) > 0) return null;
    const team = createTeam(txDb, "default");
    return createKey(txDb, team.id, "first key");
  });
  if (!created) return null;
  const rule = "─".repeat(72);
  const banner = [
    rule,
    ` kiln: created team "default" and its first API key (id ${created.id}).`,
    " It is shown only this once. Store it now; `kiln keys create` makes more.",
    "",
    `   ${created.key}`,
    "",
    rule,
    "",
  ].join("\n");
  out(banner);
  return banner;
}
