// The one mechanism every keyed request passes, composed of its parts: permissions (rules.ts, 403), billing holds
// (billing-holds.ts, 402) and per-team rate limits (team-limits.ts, 429). The edge calls `enter` right after the key
// is checked and `checkModel` once a JSON body names its model; generation calls `admit` once the prompt is counted
// and the ticket's `release` when it settles. Everything is read from the database per request, so a change applies
// on the very next one, and a background job recovered after a restart is checked again when it is admitted. Admission
// also applies the run's service tier (tier-policy.ts): refused if the team was not granted it, counted in its lane's
// buckets, and held at its price factor.
import { type AuthContext, authOf } from "../auth/authenticate.ts";
import { worstCaseMicros } from "../billing/cost.ts";
import { teamTierPrices } from "../billing/tier-prices.ts";
import type { Config } from "../config.ts";
import type { Db } from "../db/client.ts";
import { findActiveKeyWithTeam } from "../db/keys-repo.ts";
import { storageTrouble } from "../db/storage-health.ts";
import type { Team } from "../db/teams-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Admission, AdmissionTicket } from "../inference/admitted-run.ts";
import type { LimitSnapshot } from "../ratelimit/headers.ts";
import type { RateLimiter } from "../ratelimit/limiter.ts";
import type { TeamLimits, Tier } from "../ratelimit/tiers.ts";
import { BillingHolds } from "./billing-holds.ts";
import type { HoldStore } from "./hold-store.ts";
import { endpointRefusal, familyRefusal, modelRefusal } from "./rules.ts";
import { TeamRateLimits } from "./team-limits.ts";
import { allowedTiersOf, laneOf, type LimitLane, tierRefusal } from "./tier-policy.ts";

/** What the edge hands the gate for one request: plain data, no HTTP objects. */
export interface EdgeVisit {
  requestId: string;
  /** The key the edge checked, with its team and restrictions. */
  auth: AuthContext;
  /** The request path, for its endpoint family. */
  path: string;
  /** Filled with where the team stands against its limits (the answer's headers), before any refusal. */
  snapshot: LimitSnapshot;
}

/** A request between the edge and its answer, as admission needs it. */
interface Entry {
  auth: AuthContext;
  limits: TeamLimits;
  snapshot: LimitSnapshot;
  /** The request took one off the team's RPM (at the edge, or at admission for a bulk lane). */
  tookRequest: boolean;
  /** The lane whose buckets it counts in: interactive at the edge, until admission learns its tier. */
  lane: LimitLane;
}

export class Gate {
  /** Requests between the edge and their answer, by request id: admission finds its request's limits here. */
  private readonly live = new Map<string, Entry>();
  private readonly limits: TeamRateLimits;
  private readonly holds: BillingHolds;

  /** `limiter` and `holds`: where the counts and holds are kept (memory by default; Redis when replicas share them: stores.ts). */
  constructor(private readonly deps: { db: Db; config: Pick<Config, "tiers" | "defaultTier" | "tierPrices">; limiter: RateLimiter; holds?: HoldStore }) {
    this.limits = new TeamRateLimits(deps);
    this.holds = new BillingHolds(deps.db, deps.holds);
  }

  findTier(name: string): Promise<Tier | undefined> {
    return this.limits.findTier(name);
  }

  /** A team's limits, from its tier (read from the database) and its own values; no rate-limit store is asked. */
  limitsOf(team: Team): Promise<TeamLimits> {
    return this.limits.limitsOf(team);
  }

  /** A team's limits and where it stands against them now in a lane, taking nothing (the dashboard's Limits tab). */
  async standing(team: Team, lane: LimitLane = "interactive"): Promise<{ limits: TeamLimits; snapshot: LimitSnapshot }> {
    const limits = await this.limits.limitsOf(team);
    const snapshot: LimitSnapshot = {};
    await this.limits.look(team.id, limits, snapshot, lane);
    return { limits, snapshot };
  }

  /** At the edge, after the key: 403 for a family the key may not call, 402 for a lapsed account, 429 past the RPM. */
  async enter(v: EdgeVisit): Promise<void> {
    const team = v.auth.team;
    const limits = await this.limits.limitsOf(team);
    // The snapshot comes first, so a 403 or 402 below carries the rate-limit headers like every keyed answer.
    await this.limits.look(team.id, limits, v.snapshot);
    const refusal = endpointRefusal(v.auth.rules, v.path);
    if (refusal) throw refusal;
    if (team.billingEnabled) await this.holds.checkAccount(team.id);
    const entry: Entry = { auth: v.auth, limits, snapshot: v.snapshot, tookRequest: false, lane: "interactive" };
    this.live.set(v.requestId, entry);
    entry.tookRequest = await this.limits.takeRequest(team, limits, v.snapshot);
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
   * Before anything is queued: 503 when the storage could not record its usage (src/db/storage-health.ts); 403 for a
   * service tier the team was not granted; a bulk-lane run (flex, batch) moves its request to that lane's RPM (429
   * past it); for a billed team, holds the worst-case price at the tier's factor (the team's own, else the server's;
   * the whole prompt at the dearer of
   * the input and cached-input rates, max output × choices) against its balance (402 when the account lapsed or the
   * balance cannot cover it), then reserves input + max output × choices off the lane's TPM (429 when they do not
   * fit; a resumed job takes them without refusal, since waiting is all a limit asks). The ticket carries the factor
   * the charge is priced at.
   */
  async admit(a: Admission): Promise<AdmissionTicket> {
    // Work whose usage could be recorded nowhere (the database and the settlement journal on a full or unwritable
    // disk) is refused before it runs, never served unbilled.
    const trouble = storageTrouble(this.deps.db);
    if (trouble?.blocking) throw ApiError.storageFault(trouble.kind);
    const entry = this.live.get(a.scope.requestId) ?? (await this.outsideEdge(a));
    const team = entry.auth.team;
    const tier = a.scope.tier ?? "default";
    const refusal = tierRefusal(allowedTiersOf(team), tier);
    if (refusal) throw refusal;
    const lane = laneOf(tier);
    if (lane !== entry.lane) await this.moveLane(entry, lane, a.resumed === true);
    const factor = teamTierPrices(this.deps.config.tierPrices, team.tierPrices)[tier];
    const output = a.maxOutputTokens * a.choices;
    const reserved = a.inputTokens + output;
    const images = a.images ?? 0;
    const what = images ? `${images} image${images === 1 ? "" : "s"} of ${a.model.id} and a ${a.inputTokens}-token prompt` : `${a.inputTokens} input + up to ${output} output tokens of ${a.model.id}`;
    const releaseHold = team.billingEnabled ? await this.holds.hold(team.id, worstCaseMicros(a.model.pricing, { inputTokens: a.inputTokens, outputTokens: output, images }, factor), what, images ? "ask for fewer images" : undefined) : async () => {};
    try {
      await this.limits.reserveTokens(team, entry.limits, reserved, entry.snapshot, a.resumed === true, lane);
    } catch (e) {
      // A refusal, or a shared store that fails, must not leave the hold behind.
      void releaseHold();
      if (e instanceof ApiError && entry.tookRequest) {
        // A store that fails again keeps the request taken: the team waits longer, never less.
        await this.limits.giveBackRequest(team.id, entry.limits, entry.lane).catch(() => {});
        entry.tookRequest = false;
      }
      throw e;
    }
    let released = false;
    return {
      priceFactorMilli: factor,
      release: (used) => {
        if (released) return;
        released = true;
        void releaseHold();
        this.limits.reconcile(team.id, entry.limits, reserved, used ? used.inputTokens + used.outputTokens : 0, lane);
      },
    };
  }

  /**
   * A run whose tier counts in the other lane: the request the edge took goes back, and one is taken off that lane's
   * RPM instead (a batch line, which never passed the edge, takes one there too); the answer's headers then report
   * that lane. A resumed job takes it without refusal.
   */
  private async moveLane(entry: Entry, lane: LimitLane, resumed: boolean): Promise<void> {
    const team = entry.auth.team;
    if (entry.tookRequest) {
      await this.limits.giveBackRequest(team.id, entry.limits, entry.lane);
      entry.tookRequest = false;
    }
    entry.lane = lane;
    await this.limits.look(team.id, entry.limits, entry.snapshot, lane);
    entry.tookRequest = await this.limits.takeRequest(team, entry.limits, entry.snapshot, lane, resumed);
  }

  /**
   * A request that did not pass the edge (a background job recovered after a restart): its key, team and
   * permissions as they are now, so a key revoked or restricted since the job was accepted refuses it.
   */
  private async outsideEdge(a: Admission): Promise<Entry> {
    const found = await findActiveKeyWithTeam(this.deps.db, a.scope.keyId);
    if (!found) throw new ApiError(401, "authentication_error", "The API key this request was made with is no longer active.", "invalid_api_key");
    const auth = authOf(found);
    const refusal = familyRefusal(auth.rules, a.scope.endpoint) ?? modelRefusal(auth.rules, a.model.id);
    if (refusal) throw refusal;
    return { auth, limits: await this.limits.limitsOf(found.team), snapshot: {}, tookRequest: false, lane: "interactive" };
  }
}
