// Billing holds: a billed team's running requests each hold their worst-case price against its balance, so racing
// requests cannot together spend more than it has, and so do its charges still in the settlement journal (the
// database refused them for now); a missing or lapsed account refuses them all (402).
import { type BillingAccount, findAccount } from "../db/billing-repo.ts";
import { type Db, localDirOf } from "../db/client.ts";
import { formatMicros } from "../billing/money.ts";
import { journaledByTeam, journalPathFor } from "../billing/settlement-journal.ts";
import { ApiError } from "../errors/api-error.ts";

/** What a hold counts as held while it reads the balance: see BillingHolds.hold. */
interface BalanceRead {
  held: number;
}

export class BillingHolds {
  /** Micro-units held per team, by requests admitted and not yet settled. */
  private readonly held = new Map<number, number>();
  /** Holds reading their team's balance right now, per team. */
  private readonly reading = new Map<number, Set<BalanceRead>>();
  private readonly journal: string | null;

  constructor(private readonly db: Db) {
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
   * covers it (402 otherwise); `what` describes the request for that message, `smaller` how to ask for less. Returns
   * the release, which gives the hold back once.
   *
   * The balance is read asynchronously, and meanwhile a request may settle: its charge leaves the balance, then its
   * hold is released, either or both after the read. So the check counts what was held when the read began plus
   * every hold taken during it, never a release during it (at worst a charge is counted twice for that moment), and
   * then checks and holds in one synchronous step, so racing requests see each other's holds.
   */
  async hold(teamId: number, micros: number, what: string, smaller = "lower the maximum output tokens"): Promise<() => void> {
    const read: BalanceRead = { held: this.heldBy(teamId) };
    const readers = this.reading.get(teamId) ?? this.reading.set(teamId, new Set()).get(teamId)!;
    readers.add(read);
    let account: BillingAccount;
    try {
      account = await this.checkAccount(teamId);
    } finally {
      readers.delete(read);
      if (!readers.size) this.reading.delete(teamId);
    }
    const available = account.balanceMicros - read.held - this.journaledBy(teamId);
    if (micros > available) {
      throw billingError(
        `This team's balance cannot cover this request: it may cost up to ${formatMicros(micros)} (${what}), ` +
          `and ${formatMicros(Math.max(0, available))} is available. Add credit, or ${smaller}.`,
      );
    }
    this.move(teamId, micros);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.move(teamId, -micros);
    };
  }

  heldBy(teamId: number): number {
    return this.held.get(teamId) ?? 0;
  }

  /** The team's charges in the settlement journal: spent already, though not yet in its balance. */
  journaledBy(teamId: number): number {
    return this.journal ? journaledByTeam(this.journal).get(teamId) ?? 0 : 0;
  }

  private move(teamId: number, micros: number): void {
    const left = this.heldBy(teamId) + micros;
    if (left > 0) this.held.set(teamId, left);
    else this.held.delete(teamId);
    // A hold taken while others read the balance counts for them too.
    if (micros > 0) for (const read of this.reading.get(teamId) ?? []) read.held += micros;
  }
}

function billingError(message: string): ApiError {
  return new ApiError(402, "billing_error", message, "billing_not_configured");
}
