// The journal index in Redis: per team one hash, `kiln:journal:<team>`, of request id → micro-units, so replicas count
// each other's journaled charges. It expires a day after its last announcement: a charge left there by a replica whose
// withdrawal never arrived would otherwise hold the team's balance down for good (the replica that journaled it still
// counts it from its own file until its replay).
import type { RedisConnection } from "../redis/connection.ts";
import type { JournalIndex } from "./journal-index.ts";
import type { SettlementRecord } from "./settlement-journal.ts";

export const JOURNAL_PREFIX = "kiln:journal:";
export const JOURNAL_KEPT_MS = 24 * 3600_000;

function byTeam(records: readonly SettlementRecord[]): Map<number, SettlementRecord[]> {
  const teams = new Map<number, SettlementRecord[]>();
  for (const r of records) teams.set(r.teamId, [...(teams.get(r.teamId) ?? []), r]);
  return teams;
}

export class RedisJournalIndex implements JournalIndex {
  constructor(private readonly redis: RedisConnection, private readonly prefix = JOURNAL_PREFIX) {}

  async add(records: readonly SettlementRecord[]): Promise<void> {
    for (const [team, list] of byTeam(records)) {
      await this.redis.send("HSET", [this.prefix + team, ...list.flatMap((r) => [r.requestId, r.costMicros])]);
      await this.redis.send("PEXPIRE", [this.prefix + team, JOURNAL_KEPT_MS]);
    }
  }

  async remove(records: readonly SettlementRecord[]): Promise<void> {
    for (const [team, list] of byTeam(records)) await this.redis.send("HDEL", [this.prefix + team, ...list.map((r) => r.requestId)]);
  }

  async of(teamId: number): Promise<ReadonlyMap<string, number>> {
    const reply = (await this.redis.send("HGETALL", [this.prefix + teamId])) as Record<string, string> | string[] | null;
    const entries: [string, string][] = Array.isArray(reply) ? Array.from({ length: reply.length / 2 }, (_, i) => [reply[2 * i]!, reply[2 * i + 1]!]) : Object.entries(reply ?? {});
    return new Map(entries.map(([id, micros]) => [id, Number(micros)]));
  }
}
