// readTeamFile, what the request formats call for a file_id: the caller's team's file under a size bound (its head by
// a ranged read, or all of it), and the same 404 for every id that is not the team's.
import { describe, expect, test } from "bun:test";
import { createTeam } from "../../../src/db/teams-repo.ts";
import { readTeamFile } from "../../../src/files/read-team-file.ts";
import { testKiln } from "../../helpers/kiln.ts";
import { apiRefusal } from "../../helpers/api-refusal.ts";


describe("readTeamFile", async () => {
  const k = await testKiln();
  const upload = async (bytes: Uint8Array) => {
    const form = new FormData();
    form.append("purpose", "vision");
    form.append("file", new Blob([bytes]), "pic.png");
    const res = await k.req("/v1/files", { method: "POST", body: form });
    expect(res.status).toBe(200);
    return ((await res.json()) as { id: string }).id;
  };
  const PARAM = "input[0].content[1].file_id";

  test("the team's file: its object, its size, its head and its bytes", async () => {
    const bytes = Uint8Array.from({ length: 5000 }, (_, i) => i % 256);
    const id = await upload(bytes);
    const got = await readTeamFile(k.deps, k.teamId, id, 5000, PARAM);
    expect(got.file).toMatchObject({ id, object: "file", bytes: 5000, filename: "pic.png", purpose: "vision", status: "processed" });
    expect(got.size).toBe(5000);
    expect(Buffer.from(await got.head(100)).equals(Buffer.from(bytes.subarray(0, 100)))).toBe(true);
    expect((await got.head(9000)).length).toBe(5000);
    expect(Buffer.compare(Buffer.from(await got.bytes()), Buffer.from(bytes))).toBe(0);
  });

  test("larger than the caller's bound: a 400 naming the item, before any byte is read", async () => {
    const id = await upload(new Uint8Array(5001));
    const e = await apiRefusal(readTeamFile(k.deps, k.teamId, id, 5000, PARAM));
    expect([e.status, e.message, e.param, e.code]).toEqual([400, `File '${id}' is larger than the 5000 bytes this input may take.`, PARAM, null]);
  });

  test("another team's, unknown, malformed or deleted ids: the same 404 file_not_found naming the item", async () => {
    const id = await upload(new Uint8Array(10));
    const other = (await createTeam(k.deps.db, "someone-else")).id;
    const deleted = await upload(new Uint8Array(10));
    expect((await k.req(`/v1/files/${deleted}`, { method: "DELETE" })).status).toBe(200);
    for (const [team, fileId] of [[other, id], [k.teamId, "file-00000000000000000000000000000000"], [k.teamId, "file-../../kiln.db"], [k.teamId, deleted]] as const) {
      const e = await apiRefusal(readTeamFile(k.deps, team, fileId, 1000, PARAM));
      expect([e.status, e.type, e.code, e.param, e.message]).toEqual([404, "invalid_request_error", "file_not_found", PARAM, `No such File object: ${fileId}`]);
    }
  });
});
