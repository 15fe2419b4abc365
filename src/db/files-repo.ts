// Uploaded files' rows. Every read and delete is scoped to the owning team, so another team's id reads exactly like
// an unknown one. Pages are ordered by created_at, then upload order (seq), with a keyset cursor (`after` a file id).
import { and, eq } from "drizzle-orm";
import type { Db } from "./client.ts";
import { files } from "./schema.ts";

export type FileRow = typeof files.$inferSelect;
export type NewFileRow = Omit<typeof files.$inferInsert, "seq" | "status">;

export async function insertFile(db: Db, row: NewFileRow): Promise<FileRow> {
  const [file] = await db.insert(files).values(row).returning();
  return file!;
}

/** The team's file, or undefined. */
export async function findFile(db: Db, id: string, teamId: number): Promise<FileRow | undefined> {
  const [file] = await db.select().from(files).where(and(eq(files.id, id), eq(files.teamId, teamId))).limit(1);
  return file;
}

/** Whether any team has a file with this id (the start-up sweep keeps its bytes). */
export async function fileExists(db: Db, id: string): Promise<boolean> {
  const [file] = await db.select({ id: files.id }).from(files).where(eq(files.id, id)).limit(1);
  return file !== undefined;
}

/** Deletes the team's file row; false when there was none. */
export async function deleteFile(db: Db, id: string, teamId: number): Promise<boolean> {
  return db.$client.query("DELETE FROM files WHERE id = ? AND team_id = ?").run(id, teamId).changes > 0;
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
  const where = ["team_id = ?"];
  const args: (string | number)[] = [teamId];
  if (q.after !== null) {
    const cursor = await findFile(db, q.after, teamId);
    if (!cursor) return null;
    where.push(`(created_at, seq) ${q.order === "asc" ? ">" : "<"} (?, ?)`);
    args.push(cursor.createdAt, cursor.seq);
  }
  if (q.purpose !== null) {
    where.push("purpose = ?");
    args.push(q.purpose);
  }
  const dir = q.order === "asc" ? "ASC" : "DESC";
  const rows = db.$client
    .query(
      `SELECT seq, id, team_id AS teamId, key_id AS keyId, filename, purpose, bytes, status, created_at AS createdAt
       FROM files WHERE ${where.join(" AND ")} ORDER BY created_at ${dir}, seq ${dir} LIMIT ?`,
    )
    .all(...args, q.limit + 1) as FileRow[];
  return { rows: rows.slice(0, q.limit), hasMore: rows.length > q.limit };
}
