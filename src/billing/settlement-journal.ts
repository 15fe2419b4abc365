// The settlement journal: finished requests whose usage row (and charge) the database would not take, one JSON line
// each in a file beside the database, appended and fsynced so they survive a crash; settle.ts replays them into the
// database once it takes writes again (or at the next start), and billing holds count them until then. Plain files
// only: it must work when the database is what failed.
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { syncDir } from "../fs/sync-dir.ts";
import { type NewUsage, USAGE_STATUSES, type UsageStatus } from "../db/usage-repo.ts";
import { SERVICE_TIERS } from "../access/tier-policy.ts";
import type { ServiceTier } from "../inference/service-tier.ts";

export const JOURNAL_FILE = "settlements.jsonl";

/** A usage row as the journal keeps it: when the request ended travels with it. */
export type SettlementRecord = NewUsage & { createdAt: number };

/** The journal in `dir` (the database's local directory, the data dir: src/db/client.ts localDirOf); null without one. */
export function journalPathFor(dir: string | null): string | null {
  return dir === null ? null : join(dir, JOURNAL_FILE);
}

/**
 * Appends one record and fsyncs it before returning; throws when the disk will not take it, leaving the journal as it
 * was (a full disk may take part of a line: that part is cut off again).
 */
export function appendSettlement(path: string, r: SettlementRecord): void {
  const fresh = !existsSync(path);
  const fd = openSync(path, "a+", 0o600);
  let size = 0;
  try {
    // A line torn by a crash mid-write must not swallow this one: it starts on a line of its own.
    size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    const lead = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a ? "\n" : "";
    const line = Buffer.from(`${lead}${JSON.stringify(r)}\n`);
    writeWhole(fd, line);
    fsyncSync(fd);
  } catch (e) {
    try {
      ftruncateSync(fd, size);
    } catch {
      // The torn line stays; readers skip it (parseSettlement), and the settlement goes to the log whole.
    }
    throw e;
  } finally {
    closeSync(fd);
  }
  if (fresh) syncDir(dirname(path));
}

/** A write may take fewer bytes than given (the disk filling up): the rest is written, or the next write throws. */
function writeWhole(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.byteLength; ) at += writeSync(fd, bytes, at);
}

const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;
const isStatus = (v: unknown): v is UsageStatus => (USAGE_STATUSES as readonly unknown[]).includes(v);
const isTier = (v: unknown): v is ServiceTier => (SERVICE_TIERS as readonly unknown[]).includes(v);

/** One journal line → its record; null for a line that is not one (torn by a crash, or edited by hand). */
export function parseSettlement(line: string): SettlementRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const { requestId, teamId, keyId, model, endpoint, status, inputTokens, outputTokens, reasoningTokens, cachedTokens, costMicros, createdAt } = v as Record<string, unknown>;
  // Lines journaled before usage counted images have none.
  const images = (v as Record<string, unknown>).images ?? 0;
  if (!isText(requestId) || !isCount(teamId) || !isCount(keyId) || !isText(model) || !isText(endpoint) || !isStatus(status)) return null;
  if (!isCount(inputTokens) || !isCount(outputTokens) || !isCount(reasoningTokens) || !isCount(cachedTokens) || !isCount(images) || !isCount(costMicros) || !isCount(createdAt)) return null;
  // Lines journaled before service tiers have neither: the row's defaults apply (the default tier at list price).
  const { serviceTier, priceFactorMilli, batchId } = v as Record<string, unknown>;
  if (serviceTier !== undefined && !isTier(serviceTier)) return null;
  if (priceFactorMilli !== undefined && !isCount(priceFactorMilli)) return null;
  if (batchId !== undefined && !isText(batchId)) return null;
  return {
    requestId, teamId, keyId, model, endpoint, status, inputTokens, outputTokens, reasoningTokens, cachedTokens, images, costMicros, createdAt,
    ...(serviceTier !== undefined ? { serviceTier } : {}), ...(priceFactorMilli !== undefined ? { priceFactorMilli } : {}),
    ...(batchId !== undefined ? { batchId } : {}),
  };
}

/** The journal's records in order, and the non-empty lines that are not records. */
export function readJournal(path: string): { records: SettlementRecord[]; unreadable: string[] } {
  const records: SettlementRecord[] = [];
  const unreadable: string[] = [];
  if (!existsSync(path)) return { records, unreadable };
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const r = parseSettlement(line);
    if (r) records.push(r);
    else unreadable.push(line);
  }
  return { records, unreadable };
}

/** Replaces the journal with `records` (none: removes it); a crash midway leaves the old journal or the new one, whole. */
export function rewriteJournal(path: string, records: SettlementRecord[]): void {
  if (!records.length) {
    rmSync(path, { force: true });
    syncDir(dirname(path));
    return;
  }
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeWhole(fd, Buffer.from(records.map((r) => `${JSON.stringify(r)}\n`).join("")));
    fsyncSync(fd);
  } catch (e) {
    // The old journal stays as it is; the partial new one goes (a full disk gets its space back).
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(tmp, path);
  syncDir(dirname(path));
}

/** Charges per team: request id → micro-units. */
export type ChargesByTeam = ReadonlyMap<number, ReadonlyMap<string, number>>;

/** The last charges read per journal, with the file identity they were read at. */
const sums = new Map<string, { version: string; byTeam: ChargesByTeam }>();

/**
 * The charges still waiting in the journal, per team and request (micro-units); none when there is no journal. One
 * stat per call while the file is unchanged: billing admission asks this for every request of a billed team.
 */
export function journaledCharges(path: string): ChargesByTeam {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st?.isFile()) {
    sums.delete(path);
    return new Map();
  }
  // A rewrite renames a new file into place (a new inode); an append changes the size.
  const version = `${st.ino}:${st.size}:${st.mtimeMs}`;
  const cached = sums.get(path);
  if (cached?.version === version) return cached.byTeam;
  const byTeam = new Map<number, Map<string, number>>();
  for (const r of readJournal(path).records) {
    const team = byTeam.get(r.teamId) ?? new Map<string, number>();
    team.set(r.requestId, r.costMicros);
    byTeam.set(r.teamId, team);
  }
  sums.set(path, { version, byTeam });
  return byTeam;
}
