// Per-team rate limits: one request off the team's RPM at the edge, input + worst-case output off its TPM at
// admission, and what was not used given back. The limiter (in memory, or a shared store) keeps the counts.
import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import type { Team } from "../db/teams-repo.ts";
import { findDbTier } from "../db/tiers-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import { type LimitSnapshot, retryHeaders } from "../ratelimit/headers.ts";
import type { RateLimiter, TakeResult } from "../ratelimit/limiter.ts";
import { type TeamLimits, teamLimits, type Tier } from "../ratelimit/tiers.ts";

const rpmKey = (teamId: number) => `team:${teamId}:rpm`;
const tpmKey = (teamId: number) => `team:${teamId}:tpm`;

export class TeamRateLimits {
  constructor(private readonly deps: { db: Db; config: Pick<Config, "tiers" | "defaultTier">; limiter: RateLimiter }) {}

  /** Config tiers, with the database's definition winning for a name both define. */
  async findTier(name: string): Promise<Tier | undefined> {
    return (await findDbTier(this.deps.db, name)) ?? this.deps.config.tiers.find((t) => t.name === name);
  }

  /** The limits that apply to the team now (its tier read first, as teamLimits would ask for it). */
  async limitsOf(team: Pick<Team, "tier" | "rpmLimit" | "tpmLimit">): Promise<TeamLimits> {
    const name = team.tier ?? this.deps.config.defaultTier;
    const tier = name ? await this.findTier(name) : undefined;
    return teamLimits(team, () => tier, this.deps.config.defaultTier);
  }

  /** Fills `snapshot` with where the team stands, taking nothing (every keyed answer, a refusal too, reports it). */
  async look(teamId: number, limits: TeamLimits, snapshot: LimitSnapshot): Promise<void> {
    if (limits.tpm !== null) snapshot.tokens = await this.deps.limiter.peek(tpmKey(teamId), limits.tpm);
    if (limits.rpm !== null) snapshot.requests = await this.deps.limiter.peek(rpmKey(teamId), limits.rpm);
  }

  /** One request off the RPM: false when the team has none; 429 past it. */
  async takeRequest(team: Pick<Team, "id" | "name">, limits: TeamLimits, snapshot: LimitSnapshot): Promise<boolean> {
    if (limits.rpm === null) return false;
    const took = await this.deps.limiter.take(rpmKey(team.id), limits.rpm, 1);
    snapshot.requests = took;
    if (took.ok) return true;
    throw new ApiError(
      429, "rate_limit_error",
      `Rate limit reached for requests per minute (RPM) of team '${team.name}': limit ${limits.rpm}. Retry in ${seconds(took.retryAfterMs)}.`,
      "rate_limit_exceeded", null, retryHeaders(took.retryAfterMs),
    );
  }

  /** A request refused later (for its tokens) gives back the one it took, so the wait it is told is the whole wait. */
  async giveBackRequest(teamId: number, limits: TeamLimits): Promise<void> {
    if (limits.rpm !== null) await this.deps.limiter.adjust(rpmKey(teamId), limits.rpm, 1);
  }

  /**
   * Reserves `tokens` off the TPM; 429 when they do not fit. `force` (a job acknowledged before a restart) takes them
   * as debt without refusing. Resolves to whether anything was reserved.
   */
  async reserveTokens(team: Pick<Team, "id" | "name">, limits: TeamLimits, tokens: number, snapshot: LimitSnapshot, force: boolean): Promise<boolean> {
    if (limits.tpm === null) return false;
    if (force) {
      await this.deps.limiter.adjust(tpmKey(team.id), limits.tpm, -tokens);
      return true;
    }
    const took: TakeResult = await this.deps.limiter.take(tpmKey(team.id), limits.tpm, tokens);
    snapshot.tokens = took;
    if (took.ok) return true;
    throw tokensError(team.name, limits.tpm, tokens, took.retryAfterMs);
  }

  /**
   * What was reserved and not used goes back; a tool loop that used more takes the rest. A store that fails to
   * reconcile leaves the whole reservation taken: the team waits longer, never less.
   */
  reconcile(teamId: number, limits: TeamLimits, reserved: number, used: number): void {
    if (limits.tpm !== null && used !== reserved) this.deps.limiter.adjust(tpmKey(teamId), limits.tpm, reserved - used).catch(() => {});
  }
}

/** The 429 for tokens; one request that alone is over the limit is told waiting never helps. */
export function tokensError(team: string, limit: number, requested: number, retryAfterMs: number): ApiError {
  const what = `tokens per minute (TPM) of team '${team}': limit ${limit}, requested ${requested} (input plus the maximum output)`;
  if (!Number.isFinite(retryAfterMs)) {
    // The official clients do not retry on x-should-retry: false.
    return new ApiError(429, "rate_limit_error", `Request too large for the ${what}. Reduce the input or the maximum output tokens.`, "rate_limit_exceeded", null, { "x-should-retry": "false" });
  }
  return new ApiError(429, "rate_limit_error", `Rate limit reached for the ${what}. Retry in ${seconds(retryAfterMs)}.`, "rate_limit_exceeded", null, retryHeaders(retryAfterMs));
}

/** 1500 → "1.5 s", 30000 → "30 s". */
export const seconds = (ms: number) => `${(Math.ceil(ms) / 1000).toFixed(3).replace(/\.?0+$/, "")} s`;
