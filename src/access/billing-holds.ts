// Billing holds: a billed team's running requests each hold their worst-case price against its balance, so racing
// requests cannot together spend more than it has, and so do its charges still in the settlement journal (the
// database refused them for now): this replica's own, and every other replica's announced in the shared journal index
// (src/billing/journal-index.ts); a missing or lapsed account refuses them all (402). The holds live in a HoldStore
// (hold-store.ts): this process's memory, or Redis when replicas must see each other's.
import { type BillingAccount, findAccount } from "../db/billing-repo.ts";
import { type Db, localDirOf } from "../db/client.ts";
import { formatMicros } from "../billing/money.ts";
import { journalIndexOf } from "../billing/journal-index.ts";
import { journaledCharges, journalPathFor } from "../billing/settlement-journal.ts";
import { ApiError } from "../errors/api-error.ts";
import { type HoldStore, MemoryHoldStore } from "./hold-store.ts";

export class BillingHolds {
  private readonly journal: string | null;

  /** `store`: where holds are kept (this process's memory by default; Redis when replicas share them). */
  constructor(private readonly db: Db, private readonly store: HoldStore = new MemoryHoldStore()) {
    this.journal = journalPathFor(localDirOf(db));
  }

  /** The team's account, or the 402 for a missing or lapsed one. */
  async checkAccount(teamId: number): Promise<BillingAccount> {
    const account = await findAccount(this.db, teamId);
    if (!account) throw billingError("Billing is on for this team, but it has no billing account.");
    if (account.lapsedAt !== null) throw billingError("This team's billing account has lapsed: requests are refused until the operator reinstates it.");
    return account;
  }

  /**
   * Checks the account and holds `micros` if the balance, less what is held already and the team's journaled charges,
   * covers it (402 otherwise); `what` describes the request for that message, `smaller` how to ask for less. The store
   * checks and holds in one atomic step, so racing requests (on every replica sharing it) see each other's holds.
   * Resolves to the release, which gives the hold back once (its promise, which never rejects, says the store was told).
   */
  async hold(teamId: number, micros: number, what: string, smaller = "lower the maximum output tokens"): Promise<() => Promise<void>> {
    // Before the balance is read: a hold released while it is read still counts, its charge may not be in the balance.
    const mark = await this.store.mark(teamId);
    // The journal before the balance: a charge replayed while the balance is read then counts twice for the moment,
    // never in neither (read after, the journal may be emptied of a charge the balance read did not see yet).
    const journaled = await this.journaledBy(teamId);
    const account = await this.checkAccount(teamId);
    const holdId = crypto.randomUUID();
    const held = await this.store.hold(teamId, holdId, micros, account.balanceMicros - journaled, mark);
    if (!held.ok) {
      throw billingError(
        `This team's balance cannot cover this request: it may cost up to ${formatMicros(micros)} (${what}), ` +
          `and ${formatMicros(Math.max(0, held.available))} is available. Add credit, or ${smaller}.`,
      );
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      // A store that cannot be told lets the hold's lease run out instead.
      await this.store.release(teamId, holdId).catch(() => {});
    };
  }

  heldBy(teamId: number): Promise<number> {
    return this.store.heldBy(teamId);
  }

  /**
   * The team's charges in the settlement journals, this replica's and those the others announced (a charge in both
   * counts once): spent already, though not yet in its balance.
   */
  async journaledBy(teamId: number): Promise<number> {
    if (!this.journal) return 0;
    const shared = (await journalIndexOf(this.journal)?.of(teamId)) ?? new Map<string, number>();
    const charges = new Map([...shared, ...(journaledCharges(this.journal).get(teamId) ?? [])]);
    let sum = 0;
    for (const micros of charges.values()) sum += micros;
    return sum;
  }
}

function billingError(message: string): ApiError {
  return new ApiError(402, "billing_error", message, "billing_not_configured");
}
