// Uploaded files' rows. Every read and delete is scoped to the owning team, so another team's id reads exactly like
// an unknown one. Pages are ordered by created_at, then upload order (seq), with a keyset cursor (`after` a file id).
import type { Database } from "bun:sqlite";
import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { Db, Tables } from "./client.ts";

export type FileRow = Tables["files"]["$inferSelect"];
export type NewFileRow = Omit<Tables["files"]["$inferInsert"], "seq" | "status">;

export async function insertFile(db: Db, row: NewFileRow): Promise<FileRow> {
  const [file] = await db.q.insert(db.t.files).values(row).returning();
  return file!;
}

/** The team's file, or undefined. */
export async function findFile(db: Db, id: string, teamId: number): Promise<FileRow | undefined> {
  const { files } = db.t;
  const [file] = await db.q.select().from(files).where(and(eq(files.id, id), eq(files.teamId, teamId))).limit(1);
  return file;
}

/** Whether any team has a file with this id (the start-up sweep keeps its bytes). */
export async function fileExists(db: Db, id: string): Promise<boolean> {
  const { files } = db.t;
  const [file] = await db.q.select({ id: files.id }).from(files).where(eq(files.id, id)).limit(1);
  return file !== undefined;
}

/** Deletes the team's file row; false when there was none. */
export async function deleteFile(db: Db, id: string, teamId: number): Promise<boolean> {
  if (db.dialect === "sqlite") return db.lite.$client.query("DELETE FROM files WHERE id = ? AND team_id = ?").run(id, teamId).changes > 0;
  const { files } = db.t;
  return (await db.q.delete(files).where(and(eq(files.id, id), eq(files.teamId, teamId))).returning({ id: files.id })).length > 0;
}

export interface FilePageQuery {
  order: "asc" | "desc";
  /** A file id of the team: the page starts after it, in the chosen order. */
  after: string | null;
  limit: number;
  purpose: string | null;
}

/** One page of the team's files; null when `after` names no file of the team. */
export async function pageFiles(db: Db, teamId: number, q: FilePageQuery): Promise<{ rows: FileRow[]; hasMore: boolean } | null> {
  let cursor: FileRow | null = null;
  if (q.after !== null) {
    cursor = (await findFile(db, q.after, teamId)) ?? null;
    if (!cursor) return null;
  }
  const rows = db.dialect === "sqlite" ? pageFilesLite(db.lite.$client, teamId, q, cursor) : await pageFilesPg(db, teamId, q, cursor);
  return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
}

/** SQLite: one statement the connection caches per shape of the page. */
function pageFilesLite(client: Database, teamId: number, q: FilePageQuery, cursor: FileRow | null): FileRow[] {
  const where = ["team_id = ?"];
  const args: (string | number)[] = [teamId];
  if (cursor) {
    where.push(`(created_at, seq) ${q.order === "asc" ? ">" : "<"} (?, ?)`);
    args.push(cursor.createdAt, cursor.seq);
  }
  if (q.purpose !== null) {
    where.push("purpose = ?");
    args.push(q.purpose);
  }
  const dir = q.order === "asc" ? "ASC" : "DESC";
  return client
    .query(
      `SELECT seq, id, team_id AS teamId, key_id AS keyId, filename, purpose, bytes, status, created_at AS createdAt
       FROM files WHERE ${where.join(" AND ")} ORDER BY created_at ${dir}, seq ${dir} LIMIT ?`,
    )
    .all(...args, q.limit + 1) as FileRow[];
}

/** Postgres: drizzle's builder. */
async function pageFilesPg(db: Db, teamId: number, q: FilePageQuery, cursor: FileRow | null): Promise<FileRow[]> {
  const { files } = db.t;
  const by = q.order === "asc" ? asc : desc;
  return await db.q
    .select()
    .from(files)
    .where(
      and(
        eq(files.teamId, teamId),
        cursor ? sql`(${files.createdAt}, ${files.seq}) ${sql.raw(q.order === "asc" ? ">" : "<")} (${cursor.createdAt}, ${cursor.seq})` : undefined,
        q.purpose === null ? undefined : eq(files.purpose, q.purpose),
      ),
    )
    .orderBy(by(files.createdAt), by(files.seq))
    .limit(q.limit + 1);
}
