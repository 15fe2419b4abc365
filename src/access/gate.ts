// The one mechanism every keyed request passes: permissions (403), billing (402) and per-team rate limits (429).
// The edge calls `enter` right after the key is checked (endpoint family, billing account, one request off the
// team's RPM) and `checkModel` once a JSON body names its model; generation calls `admit` once the prompt is counted
// (tokens reserved off the TPM, the worst-case price held against the balance) and the ticket's `release` when it
// settles. Everything is read from the database per request, so a change applies on the very next one.
import type { AuthContext } from "../auth/authenticate.ts";
import type { Config } from "../config.ts";
import { findAccount } from "../db/billing-repo.ts";
import type { Db } from "../db/client.ts";
import { findActiveKeyWithTeam } from "../db/keys-repo.ts";
import { findDbTier } from "../db/tiers-repo.ts";
import { costMicros } from "../billing/cost.ts";
import { formatMicros } from "../billing/money.ts";
import { ApiError } from "../errors/api-error.ts";
import type { RequestMeta } from "../http/request-meta.ts";
import type { Admission, AdmissionTicket } from "../inference/lifecycle.ts";
import type { RateLimiter } from "../ratelimit/limiter.ts";
import { type LimitSnapshot, retryHeaders } from "../ratelimit/headers.ts";
import { type TeamLimits, teamLimits, type Tier } from "../ratelimit/tiers.ts";
import { endpointRefusal, modelRefusal, restrictionOf } from "./rules.ts";

interface Entry {
  auth: AuthContext;
  limits: TeamLimits;
  snapshot: LimitSnapshot;
  /** The request took one off the team's RPM at the edge. */
  tookRequest: boolean;
}

const rpmKey = (teamId: number) => `team:${teamId}:rpm`;
const tpmKey = (teamId: number) => `team:${teamId}:tpm`;

export class Gate {
  /** Requests between the edge and their answer, by request id: admission finds its request's limits here. */
  private readonly live = new Map<string, Entry>();
  /** Worst-case prices of running requests, per team, held against the balance so racing requests cannot overspend. */
  private readonly held = new Map<number, number>();

  constructor(
    private readonly deps: { db: Db; config: Pick<Config, "tiers" | "defaultTier">; limiter: RateLimiter },
  ) {}

  /** Config tiers, with the database's definition winning for a name both define. */
  findTier(name: string): Tier | undefined {
    return findDbTier(this.deps.db, name) ?? this.deps.config.tiers.find((t) => t.name === name);
  }

  limitsOf(team: AuthContext["team"]): TeamLimits {
    return teamLimits(team, (n) => this.findTier(n), this.deps.config.defaultTier);
  }

  /** At the edge, after the key: 403 for a family the key may not call, 402 for a lapsed account, 429 past the RPM. */
  async enter(meta: RequestMeta, path: string): Promise<void> {
    const auth = meta.auth!;
    const limits = this.limitsOf(auth.team);
    const snapshot: LimitSnapshot = {};
    meta.rateLimit = snapshot;
    // The snapshot comes first, so a 403 or 402 below carries the rate-limit headers like every keyed answer.
    if (limits.tpm !== null) snapshot.tokens = await this.deps.limiter.peek(tpmKey(auth.teamId), limits.tpm);
    if (limits.rpm !== null) snapshot.requests = await this.deps.limiter.peek(rpmKey(auth.teamId), limits.rpm);
    const refusal = endpointRefusal(auth.rules, path);
    if (refusal) throw refusal;
    if (auth.team.billingEnabled) this.checkAccount(auth.teamId);
    const entry: Entry = { auth, limits, snapshot, tookRequest: false };
    this.live.set(meta.id, entry);
    if (limits.rpm === null) return;
    const took = await this.deps.limiter.take(rpmKey(auth.teamId), limits.rpm, 1);
    snapshot.requests = took;
    entry.tookRequest = took.ok;
    if (!took.ok) {
      throw new ApiError(
        429, "rate_limit_error",
        `Rate limit reached for requests per minute (RPM) of team '${auth.team.name}': limit ${limits.rpm}. Retry in ${seconds(took.retryAfterMs)}.`,
        "rate_limit_exceeded", null, retryHeaders(took.retryAfterMs),
      );
    }
  }

  /** The request is over (its answer, or a stream's first byte, is out). */
  leave(requestId: string): void {
    this.live.delete(requestId);
  }

  /** 403 when the key or its team may not use the model a request names. */
  checkModel(auth: AuthContext, model: string): void {
    const refusal = modelRefusal(auth.rules, model);
    if (refusal) throw refusal;
  }

  /**
   * Before anything is queued: reserves input + max output × choices off the team's TPM (429 when they do not fit)
   * and, for a billed team, holds the worst-case price against its balance (402 when the balance cannot cover it).
   */
  async admit(a: Admission): Promise<AdmissionTicket> {
    const entry = this.live.get(a.scope.requestId) ?? this.fresh(a.scope.keyId);
    const teamId = a.scope.teamId;
    const reserved = a.inputTokens + a.maxOutputTokens * a.choices;
    const worst = entry.auth.team.billingEnabled ? costMicros(a.model.pricing, { inputTokens: a.inputTokens, outputTokens: a.maxOutputTokens * a.choices }) : 0;
    // The balance is checked and the hold placed in one synchronous step, so racing requests see each other's holds.
    // A resumed request (acknowledged before a restart) is not refused: it holds all the same.
    if (entry.auth.team.billingEnabled) {
      if (!a.resumed) {
        const account = this.checkAccount(teamId);
        const available = account.balanceMicros - (this.held.get(teamId) ?? 0);
        if (worst > available) {
          throw billingError(
            `This team's balance cannot cover this request: it may cost up to ${formatMicros(worst)} (${a.inputTokens} input + up to ${a.maxOutputTokens * a.choices} output tokens of ${a.model.id}), ` +
              `and ${formatMicros(Math.max(0, available))} is available. Add credit, or lower the maximum output tokens.`,
          );
        }
      }
      this.hold(teamId, worst);
    }
    const tpm = entry.limits.tpm;
    if (tpm !== null && a.resumed) await this.deps.limiter.adjust(tpmKey(teamId), tpm, -reserved);
    else if (tpm !== null) {
      let took: Awaited<ReturnType<RateLimiter["take"]>>;
      try {
        took = await this.deps.limiter.take(tpmKey(teamId), tpm, reserved);
      } catch (e) {
        // A shared store that fails must not leave the hold behind.
        this.hold(teamId, -worst);
        throw e;
      }
      entry.snapshot.tokens = took;
      if (!took.ok) {
        this.hold(teamId, -worst);
        // A request refused for its tokens gives its request back, so the wait it is told is the whole wait.
        if (entry.tookRequest && entry.limits.rpm !== null) {
          await this.deps.limiter.adjust(rpmKey(teamId), entry.limits.rpm, 1);
          entry.tookRequest = false;
        }
        throw tokensError(entry.auth.team.name, tpm, reserved, took.retryAfterMs);
      }
    }
    let released = false;
    return {
      release: (used) => {
        if (released) return;
        released = true;
        this.hold(teamId, -worst);
        // Reconcile: what was reserved and not used goes back; a tool loop that used more takes the rest.
        const actual = used ? used.inputTokens + used.outputTokens : 0;
        // A store that fails to reconcile leaves the whole reservation taken: the team waits longer, never less.
        if (tpm !== null && actual !== reserved) this.deps.limiter.adjust(tpmKey(teamId), tpm, reserved - actual).catch(() => {});
      },
    };
  }

  private hold(teamId: number, micros: number): void {
    const left = (this.held.get(teamId) ?? 0) + micros;
    if (left > 0) this.held.set(teamId, left);
    else this.held.delete(teamId);
  }

  /** The account of a billed team, or the 402 for a missing or lapsed one. */
  private checkAccount(teamId: number) {
    const account = findAccount(this.deps.db, teamId);
    if (!account) throw billingError("Billing is on for this team, but it has no billing account.");
    if (account.lapsedAt !== null) throw billingError("This team's billing account has lapsed: requests are refused until the operator reinstates it.");
    return account;
  }

  /** A request that did not pass the edge (a background job): its key and team as they are now. */
  private fresh(keyId: number): Entry {
    const found = findActiveKeyWithTeam(this.deps.db, keyId);
    if (!found) throw ApiError.unauthorized();
    const auth = { keyId, teamId: found.team.id, team: found.team, rules: { key: restrictionOf(found.key), team: restrictionOf(found.team) } };
    return { auth, limits: this.limitsOf(found.team), snapshot: {}, tookRequest: false };
  }
}

function billingError(message: string): ApiError {
  return new ApiError(402, "billing_error", message, "billing_not_configured");
}

function tokensError(team: string, limit: number, requested: number, retryAfterMs: number): ApiError {
  const what = `tokens per minute (TPM) of team '${team}': limit ${limit}, requested ${requested} (input plus the maximum output)`;
  if (!Number.isFinite(retryAfterMs)) {
    // Waiting never helps: the request alone is over the limit. The official clients do not retry on x-should-retry: false.
    return new ApiError(429, "rate_limit_error", `Request too large for the ${what}. Reduce the input or the maximum output tokens.`, "rate_limit_exceeded", null, { "x-should-retry": "false" });
  }
  return new ApiError(429, "rate_limit_error", `Rate limit reached for the ${what}. Retry in ${seconds(retryAfterMs)}.`, "rate_limit_exceeded", null, retryHeaders(retryAfterMs));
}

const seconds = (ms: number) => `${(Math.ceil(ms) / 1000).toFixed(3).replace(/\.?0+$/, "")} s`;
