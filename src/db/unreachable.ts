// Whether a database error means the database could not be reached for now (restarting, shut down, the connection cut)
// rather than that it refused the statement: a write that failed so may be sent again once it is back.

/** Bun's Postgres client's own codes for a connection that could not be made or was lost. */
const CONNECTION_CODES = new Set(["ERR_POSTGRES_CONNECTION_REFUSED", "ERR_POSTGRES_CONNECTION_CLOSED", "ERR_POSTGRES_CONNECTION_TIMEOUT"]);

/** SQLSTATEs of a server going away or not taking connections yet: class 08 (connection), 57P01–57P03 (shutdown, starting up). */
const UNREACHABLE_STATES = /^(08...|57P0[1-3])$/;

/** Pure: `e` as Bun's SQL client throws it (a `code`, and for the server's errors an `errno` SQLSTATE). */
export function databaseUnreachable(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  const { code, errno } = e as { code?: unknown; errno?: unknown };
  return (typeof code === "string" && CONNECTION_CODES.has(code)) || (typeof errno === "string" && UNREACHABLE_STATES.test(errno));
}
