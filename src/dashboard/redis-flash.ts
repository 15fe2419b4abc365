// The dashboard's one-shot notes in Redis, for replicas behind a load balancer: the page after a form's redirect may be
// served by another replica than the form was, and must still show the notice and the key just made. Per session one
// hash, `kiln:flash:<session token hash>`, with the field `notice` and a field per waiting key; each value sealed under a
// key derived from the server secret the replicas share, bound to its session and team, so Redis (and its dumps) never
// hold a key's text in the clear. A read takes and deletes in one script: a note is shown once across all replicas.
// The hash expires five minutes after the last note was left in it (the browser never followed the redirect).
import { aeadOpen, aeadSeal } from "../crypto/aead.ts";
import { frame } from "../crypto/sealing.ts";
import type { RedisConnection } from "../redis/connection.ts";
import { LuaScript } from "../redis/connection.ts";
import { type CreatedKey, type Flash, type FlashStore, TTL_MS } from "./flash.ts";

export const FLASH_PREFIX = "kiln:flash:";

// ARGV: field, value, ttl ms. A key's field takes the session's next number, so keys come back in the order made.
const PUT = new LuaScript("flash-put", `
local field = ARGV[1]
if field ~= 'notice' then field = field .. redis.call('HINCRBY', KEYS[1], 'seq', 1) end
redis.call('HSET', KEYS[1], field, ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`);

// ARGV: a field prefix → {field, value, …} of the fields under it, deleted as they are read.
const TAKE = new LuaScript("flash-take", `
local all = redis.call('HGETALL', KEYS[1])
local taken = {}
for i = 1, #all, 2 do
  if string.sub(all[i], 1, #ARGV[1]) == ARGV[1] then
    table.insert(taken, all[i])
    table.insert(taken, all[i + 1])
    redis.call('HDEL', KEYS[1], all[i])
  end
end
return taken
`);

export class RedisFlashStore implements FlashStore {
  /** `key`: 32 bytes derived from the server secret for this one purpose. */
  constructor(private readonly redis: RedisConnection, private readonly key: Buffer, private readonly ttlMs = TTL_MS) {}

  private aad(sessionHash: string, what: string): Buffer {
    return frame("kiln-dashboard-flash", sessionHash, what);
  }

  private seal(sessionHash: string, what: string, value: unknown): string {
    return aeadSeal(this.key, JSON.stringify(value), this.aad(sessionHash, what)).toString("base64");
  }

  /** A value sealed by `seal` for this session and use, or null (tampered with, or sealed under another secret). */
  private open<T>(sessionHash: string, what: string, sealed: string): T | null {
    const text = aeadOpen(this.key, Buffer.from(sealed, "base64"), this.aad(sessionHash, what));
    return text === null ? null : (JSON.parse(text) as T);
  }

  private async takeFields(sessionHash: string, prefix: string): Promise<[string, string][]> {
    const flat = (await this.redis.run(TAKE, [FLASH_PREFIX + sessionHash], [prefix])) as string[];
    const pairs: [string, string][] = [];
    for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i]!, flat[i + 1]!]);
    return pairs;
  }

  async put(sessionHash: string, flash: Flash): Promise<void> {
    await this.redis.run(PUT, [FLASH_PREFIX + sessionHash], ["notice", this.seal(sessionHash, "notice", flash), this.ttlMs]);
  }

  async take(sessionHash: string): Promise<Flash | null> {
    const [found] = await this.takeFields(sessionHash, "notice");
    return found ? this.open<Flash>(sessionHash, "notice", found[1]) : null;
  }

  async putKey(sessionHash: string, key: CreatedKey): Promise<void> {
    await this.redis.run(PUT, [FLASH_PREFIX + sessionHash], [`key:${key.teamId}:`, this.seal(sessionHash, `key:${key.teamId}`, key), this.ttlMs]);
  }

  async takeKeys(sessionHash: string, teamId: number): Promise<CreatedKey[]> {
    const prefix = `key:${teamId}:`;
    const taken = await this.takeFields(sessionHash, prefix);
    taken.sort((a, b) => Number(a[0].slice(prefix.length)) - Number(b[0].slice(prefix.length)));
    return taken.flatMap(([, sealed]) => this.open<CreatedKey>(sessionHash, `key:${teamId}`, sealed) ?? []);
  }

  async drop(sessionHash: string): Promise<void> {
    await this.redis.send("DEL", [FLASH_PREFIX + sessionHash]);
  }
}
