// authOf: an active key and its team as the context a request runs under, the same for a request at the edge
// (authenticate), a recovered job (the gate) and a batch line.
import { expect, test } from "bun:test";
import { authOf } from "../../../src/auth/authenticate.ts";
import { openDatabase } from "../../../src/db/client.ts";
import { createKey, findActiveKeyWithTeam, restrictKey } from "../../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../../src/db/teams-repo.ts";
import { tempDir } from "../../helpers/kiln.ts";

test("the key's and the team's restrictions as they are now, with the team's row", async () => {
  const db = await openDatabase(tempDir("kiln-auth-of-"));
  const team = await createTeam(db, "acme");
  const key = await createKey(db, team.id, "k");
  await restrictKey(db, key.id, { models: ["m-1"] });
  await updateTeam(db, team.id, { allowedEndpoints: ["chat", "batches"] });
  const found = (await findActiveKeyWithTeam(db, key.id))!;
  expect(authOf(found)).toEqual({
    keyId: key.id, teamId: team.id, team: found.team,
    rules: { key: { models: ["m-1"], endpoints: null }, team: { models: null, endpoints: ["chat", "batches"] } },
  });
});
