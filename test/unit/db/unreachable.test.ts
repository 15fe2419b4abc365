// Which database errors mean "not reachable for now" (a write may be sent again) and which are refusals.
import { describe, expect, test } from "bun:test";
import { databaseUnreachable } from "../../../src/db/unreachable.ts";

describe("databaseUnreachable", () => {
  test("a refused, closed or timed-out connection, and a server shutting down or starting up, are unreachable", () => {
    for (const code of ["ERR_POSTGRES_CONNECTION_REFUSED", "ERR_POSTGRES_CONNECTION_CLOSED", "ERR_POSTGRES_CONNECTION_TIMEOUT"]) expect(databaseUnreachable({ code })).toBe(true);
    for (const errno of ["57P01", "57P02", "57P03", "08006", "08001"]) expect(databaseUnreachable({ code: "ERR_POSTGRES_SERVER_ERROR", errno })).toBe(true);
  });

  test("a statement the database refused is not", () => {
    expect(databaseUnreachable({ code: "ERR_POSTGRES_SERVER_ERROR", errno: "23505" })).toBe(false);
    expect(databaseUnreachable({ code: "SQLITE_BUSY" })).toBe(false);
    expect(databaseUnreachable(new Error("boom"))).toBe(false);
    expect(databaseUnreachable(null)).toBe(false);
    expect(databaseUnreachable("ERR_POSTGRES_CONNECTION_CLOSED")).toBe(false);
  });

  test("Bun's client, refused a connection, throws what it reads as unreachable", async () => {
    const { SQL } = await import("bun");
    const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const port = server.port;
    server.stop(true);
    const client = new SQL(`postgres://postgres@127.0.0.1:${port}/x`, { max: 1, connectionTimeout: 2 });
    const e = await client`SELECT 1`.then(() => null, (err: unknown) => err);
    await client.close({ timeout: 0 });
    expect(databaseUnreachable(e)).toBe(true);
  });
});
