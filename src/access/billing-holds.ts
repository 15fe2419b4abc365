// Billing holds: a billed team's running requests each hold their worst-case price against its balance, so racing
// requests cannot together spend more than it has, and so do its charges still in the settlement journal (the
// database refused them for now); a missing or lapsed account refuses them all (402).
import { type BillingAccount, findAccount } from "../db/billing-repo.ts";
import { type Db, localDirOf } from "../db/client.ts";
import { formatMicros } from "../billing/money.ts";
import { journaledByTeam, journalPathFor } from "../billing/settlement-journal.ts";
import { ApiError } from "../errors/api-error.ts";

export class BillingHolds {
  /** Micro-units held per team, by requests admitted and not yet settled. */
  private readonly held = new Map<number, number>();
  private readonly journal: string | null;

  constructor(private readonly db: Db) {
    this.journal = journalPathFor(localDirOf(db));
  }

  /** The team's account, or the 402 for a missing or lapsed one. */
  checkAccount(teamId: number): BillingAccount {
    const account = findAccount(this.db, teamId);
    if (!account) throw billingError("Billing is on for this team, but it has no billing account.");
    if (account.lapsedAt !== null) throw billingError("This team's billing account has lapsed: requests are refused until the operator reinstates it.");
    return account;
  }

  /**
   * Checks the account and holds `micros` if the balance, less what is held already and the team's journaled charges,
   * covers it (402 otherwise); `what` describes the request for that message, `smaller` how to ask for less. One synchronous step, so racing
   * requests see each other's holds. Returns the release, which gives the hold back once.
   */
  hold(teamId: number, micros: number, what: string, smaller = "lower the maximum output tokens"): () => void {
    const account = this.checkAccount(teamId);
    const available = account.balanceMicros - this.heldBy(teamId) - this.journaledBy(teamId);
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
  }
}

function billingError(message: string): ApiError {
  return new ApiError(402, "billing_error", message, "billing_not_configured");
}
