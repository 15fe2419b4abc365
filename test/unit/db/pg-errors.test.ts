// Errors from Postgres queries are the database's own, as bun:sqlite's are: its reason and code, never drizzle's
// "Failed query" text with every parameter (a stored response's events, a prompt) that would reach kiln's log.
import { describe, expect, test } from "bun:test";
import { writeStream } from "../../../src/db/response-events-repo.ts";
import { insertResponse } from "../../../src/db/responses-repo.ts";
import { createKey } from "../../../src/db/keys-repo.ts";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { DIALECTS } from "../../helpers/databases.ts";

describe("errors from Postgres", () => {
  const dialect = DIALECTS.find((d) => d.name === "postgres")!;

  test("a unique violation says so and names its constraint, without the query's parameters", async () => {
    const { db, close } = await dialect.open();
    await createTeam(db, "secret-team-name");
    const e = (await createTeam(db, "secret-team-name").catch((x: unknown) => x)) as Error & { errno?: string };
    expect(e.message).toBe('duplicate key value violates unique constraint "teams_name_unique"');
    expect(e.errno).toBe("23505");
    expect(String(e)).not.toContain("secret-team-name");
    await close();
  });

  test("a stored stream's failed write (a transaction) keeps the text it was writing out of the message", async () => {
    const { db, failInserts, close } = await dialect.open();
    const team = await createTeam(db, "t");
    const key = await createKey(db, team.id, "k");
    await insertResponse(db, {
      id: "resp_1", teamId: team.id, keyId: key.id, model: "m", status: "in_progress", requestJson: "{}", responseJson: "{}",
      createdAt: 1, updatedAt: 1, expiresAt: 9e9,
    }, []);
    await failInserts("response_events");
    const e = (await writeStream(db, [{ kind: "event", responseId: "resp_1", sequence: 0, json: '{"text":"a private prompt"}' }]).catch((x: unknown) => x)) as Error;
    expect(e.message).toBe("database or disk is full");
    expect(String(e)).not.toContain("private prompt");
    await close();
  });
});
