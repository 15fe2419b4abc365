// Per-team rate limits: one request off the team's RPM at the edge, input + worst-case output off its TPM at
// admission, and what was not used given back. The limiter (in memory, or a shared store) keeps the counts. Each team
// has two pairs of buckets of the same size: interactive work counts in one, bulk work (flex and batch) in the other
// (tier-policy.ts), so a team's batch cannot lock it out of its own interactive traffic.
import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import type { Team } from "../db/teams-repo.ts";
import { findDbTier } from "../db/tiers-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import { type LimitSnapshot, retryHeaders } from "../ratelimit/headers.ts";
import type { RateLimiter, TakeResult } from "../ratelimit/limiter.ts";
import { type TeamLimits, teamLimits, type Tier } from "../ratelimit/tiers.ts";
import type { LimitLane } from "./tier-policy.ts";

/** A lane's bucket: the interactive ones keep the names they had before lanes existed. */
export function bucketKey(teamId: number, kind: "rpm" | "tpm", lane: LimitLane): string {
  return lane === "interactive" ? `team:${teamId}:${kind}` : `team:${teamId}:${lane}:${kind}`;
}
const rpmKey = (teamId: number, lane: LimitLane) => bucketKey(teamId, "rpm", lane);
const tpmKey = (teamId: number, lane: LimitLane) => bucketKey(teamId, "tpm", lane);

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

  /** Fills `snapshot` with where the team stands in a lane, taking nothing (every keyed answer, a refusal too, reports it). */
  async look(teamId: number, limits: TeamLimits, snapshot: LimitSnapshot, lane: LimitLane = "interactive"): Promise<void> {
    if (limits.tpm !== null) snapshot.tokens = await this.deps.limiter.peek(tpmKey(teamId, lane), limits.tpm);
    if (limits.rpm !== null) snapshot.requests = await this.deps.limiter.peek(rpmKey(teamId, lane), limits.rpm);
  }

  /** One request off the lane's RPM: false when the team has none; 429 past it. `force` takes it as debt without refusing. */
  async takeRequest(team: Pick<Team, "id" | "name">, limits: TeamLimits, snapshot: LimitSnapshot, lane: LimitLane = "interactive", force = false): Promise<boolean> {
    if (limits.rpm === null) return false;
    if (force) {
      await this.deps.limiter.adjust(rpmKey(team.id, lane), limits.rpm, -1);
      return true;
    }
    const took = await this.deps.limiter.take(rpmKey(team.id, lane), limits.rpm, 1);
    snapshot.requests = took;
    if (took.ok) return true;
    throw new ApiError(
      429, "rate_limit_error",
      `Rate limit reached for ${laneWords(lane)}requests per minute (RPM) of team '${team.name}': limit ${limits.rpm}. Retry in ${seconds(took.retryAfterMs)}.`,
      "rate_limit_exceeded", null, retryHeaders(took.retryAfterMs),
    );
  }

  /** A request refused later (for its tokens) gives back the one it took, so the wait it is told is the whole wait. */
  async giveBackRequest(teamId: number, limits: TeamLimits, lane: LimitLane = "interactive"): Promise<void> {
    if (limits.rpm !== null) await this.deps.limiter.adjust(rpmKey(teamId, lane), limits.rpm, 1);
  }

  /**
   * Reserves `tokens` off the TPM; 429 when they do not fit. `force` (a job acknowledged before a restart) takes them
   * as debt without refusing. Resolves to whether anything was reserved.
   */
  async reserveTokens(team: Pick<Team, "id" | "name">, limits: TeamLimits, tokens: number, snapshot: LimitSnapshot, force: boolean, lane: LimitLane = "interactive"): Promise<boolean> {
    if (limits.tpm === null) return false;
    if (force) {
      await this.deps.limiter.adjust(tpmKey(team.id, lane), limits.tpm, -tokens);
      return true;
    }
    const took: TakeResult = await this.deps.limiter.take(tpmKey(team.id, lane), limits.tpm, tokens);
    snapshot.tokens = took;
    if (took.ok) return true;
    throw tokensError(team.name, limits.tpm, tokens, took.retryAfterMs, lane);
  }

  /**
   * What was reserved and not used goes back; a tool loop that used more takes the rest. A store that fails to
   * reconcile leaves the whole reservation taken: the team waits longer, never less.
   */
  reconcile(teamId: number, limits: TeamLimits, reserved: number, used: number, lane: LimitLane = "interactive"): void {
    if (limits.tpm !== null && used !== reserved) this.deps.limiter.adjust(tpmKey(teamId, lane), limits.tpm, reserved - used).catch(() => {});
  }
}

/** How a refusal names the lane: the interactive one as it always read, the bulk one said outright. */
const laneWords = (lane: LimitLane) => (lane === "interactive" ? "" : "flex and batch ");

/** The 429 for tokens; one request that alone is over the limit is told waiting never helps. */
export function tokensError(team: string, limit: number, requested: number, retryAfterMs: number, lane: LimitLane = "interactive"): ApiError {
  const what = `${laneWords(lane)}tokens per minute (TPM) of team '${team}': limit ${limit}, requested ${requested} (input plus the maximum output)`;
  if (!Number.isFinite(retryAfterMs)) {
    // The official clients do not retry on x-should-retry: false.
    return new ApiError(429, "rate_limit_error", `Request too large for the ${what}. Reduce the input or the maximum output tokens.`, "rate_limit_exceeded", null, { "x-should-retry": "false" });
  }
  return new ApiError(429, "rate_limit_error", `Rate limit reached for the ${what}. Retry in ${seconds(retryAfterMs)}.`, "rate_limit_exceeded", null, retryHeaders(retryAfterMs));
}

/** 1500 → "1.5 s", 30000 → "30 s". */
export const seconds = (ms: number) => `${(Math.ceil(ms) / 1000).toFixed(3).replace(/\.?0+$/, "")} s`;
