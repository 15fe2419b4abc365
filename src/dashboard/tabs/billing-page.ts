// The Limits & billing page's markup: live RPM/TPM use, the tier and limits, the billing state and balance, the ledger
// a page at a time, and (for operators only) the forms that change them, each showing its own error beside it.
import type { BillingAccount, LedgerRow } from "../../db/billing-repo.ts";
import type { Team } from "../../db/teams-repo.ts";
import type { LimitSnapshot } from "../../ratelimit/headers.ts";
import type { TeamLimits, Tier } from "../../ratelimit/tiers.ts";
import { fmtCount, fmtLimit, fmtMoney, fmtTime } from "../format.ts";
import { type Html, html } from "../html.ts";
import { csrfField } from "../layout.ts";
import type { Viewer } from "../viewer.ts";
import { type CreditTyped, describeUse, type LimitUse, MAX_NOTE } from "./billing-parts.ts";
import { serviceTiersCard } from "./service-tiers-card.ts";
import type { TierPrices } from "../../billing/tier-prices.ts";

export type BillingForm = "tier" | "credit" | "billing" | "lapse" | "service-tiers";

/** A form that was refused: which one, why, and what was typed into it. */
export interface FormProblem {
  form: BillingForm;
  message: string;
  credit?: CreditTyped;
  tier?: string;
}

export interface BillingView {
  team: Team;
  limits: TeamLimits;
  snapshot: LimitSnapshot;
  /** Every tier the team may be put on. */
  tiers: Tier[];
  defaultTier: string | undefined;
  account: BillingAccount | undefined;
  ledger: { rows: LedgerRow[]; before: number | null; olderBefore: number | null };
  /** Each service tier's price factor (KILN_TIER_PRICES). */
  tierPrices: TierPrices;
  /** Where the team stands in the flex and batch lane's buckets. */
  bulk: LimitSnapshot;
}

const time = (unixS: number) => html`<time datetime="${new Date(unixS * 1000).toISOString()}">${fmtTime(unixS)}</time>`;
const signed = (micros: number) => (micros > 0 ? `+${fmtMoney(micros)}` : fmtMoney(micros));

function errorFor(p: FormProblem | undefined, form: BillingForm): Html {
  return p?.form === form ? html`<p class="form-error" id="${form}-error" role="alert">${p.message}</p>` : html``;
}

function useTile(id: string, label: string, use: LimitUse): Html {
  if (use.unlimited) {
    return html`<div class="stat" id="${id}" data-unlimited="true">
  <div class="label">${label}</div>
  <div class="value">${use.text}</div>
  <div class="sub">No per-minute limit applies.</div>
</div>`;
  }
  const near = use.level === "bad" ? html` <span class="badge bad">at the limit</span>` : use.level === "warn" ? html` <span class="badge warn">near the limit</span>` : "";
  return html`<div class="stat" id="${id}" data-used="${use.used}" data-limit="${use.limit}">
  <div class="label">${label}</div>
  <div class="value">${fmtCount(use.used)} <span class="of">/ ${fmtCount(use.limit)}</span></div>
  <meter min="0" max="${use.limit}" value="${use.used}" low="${use.limit * 0.7}" high="${use.limit * 0.9}" optimum="0" aria-label="${use.text}">${use.text}</meter>
  <div class="sub">${use.reset}${near}</div>
</div>`;
}

/** The billing state in a word, for the badge beside the balance. */
function billingBadge(team: Team, account: BillingAccount | undefined): Html {
  if (!team.billingEnabled) return html`<span class="badge" id="billing-state" data-state="off">billing off</span>`;
  if (!account) return html`<span class="badge bad" id="billing-state" data-state="no-account">no account</span>`;
  if (account.lapsedAt !== null) return html`<span class="badge bad" id="billing-state" data-state="lapsed">lapsed</span>`;
  if (account.balanceMicros <= 0) return html`<span class="badge warn" id="billing-state" data-state="empty">no credit</span>`;
  return html`<span class="badge good" id="billing-state" data-state="on">billing on</span>`;
}

function billingSentence(team: Team, account: BillingAccount | undefined): string {
  if (!team.billingEnabled) return "Billing is off: the team's requests are free and nothing is charged. A balance and ledger from before are kept.";
  if (!account) return "Billing is on but the team has no billing account, so every request gets 402. Adding credit opens one.";
  if (account.lapsedAt !== null) return "The account has lapsed: every request of the team gets 402 until an operator reinstates it.";
  if (account.balanceMicros <= 0) return "Billing is on and there is no credit left: requests the balance cannot cover get 402.";
  return "Billing is on: each request is charged to the balance, and one the balance cannot cover gets 402.";
}

function tierFact(v: BillingView): Html {
  const own = v.team.tier;
  if (own !== null && v.limits.tier === null) return html`${own} <span class="badge warn">not defined: no limits from it</span>`;
  if (own === null && v.limits.tier !== null) return html`${v.limits.tier} <span class="hint-inline">(the default tier)</span>`;
  return html`${v.limits.tier ?? "none"}`;
}

function limitFact(effective: number | null, override: number | null): Html {
  return html`${fmtLimit(effective)}${override !== null ? html` <span class="hint-inline">(this team's own limit, over its tier's)</span>` : ""}`;
}

function tierForm(viewer: Viewer, v: BillingView, p: FormProblem | undefined): Html {
  const chosen = p?.form === "tier" ? p.tier ?? "" : v.team.tier ?? "none";
  const undefinedOwn = v.team.tier !== null && !v.tiers.some((t) => t.name === v.team.tier);
  const none = v.defaultTier ? `none (the default tier "${v.defaultTier}" applies)` : "none (no tier limits)";
  return html`<form method="post" action="/dashboard/teams/${v.team.id}/billing/tier" class="row-form subform" id="tier-form">
  ${csrfField(viewer)}
  <label class="field grow">Tier
    <select name="tier" id="tier-select" aria-invalid="${p?.form === "tier" ? "true" : "false"}" aria-describedby="tier-error">
      <option value="none"${chosen === "none" ? html` selected` : ""}>${none}</option>
      ${v.tiers.map((t) => html`<option value="${t.name}"${chosen === t.name ? html` selected` : ""}>${t.name}: ${fmtLimit(t.rpm)} RPM, ${fmtLimit(t.tpm)} TPM</option>`)}
      ${undefinedOwn ? html`<option value="${v.team.tier}" disabled${chosen === v.team.tier ? html` selected` : ""}>${v.team.tier} (not defined)</option>` : ""}
    </select>
  </label>
  <button type="submit" class="btn btn-primary">Set tier</button>
</form>
${errorFor(p, "tier")}`;
}

function creditForm(viewer: Viewer, team: Team, p: FormProblem | undefined): Html {
  const typed = p?.form === "credit" ? p.credit : undefined;
  const bad = p?.form === "credit" ? "true" : "false";
  return html`<form method="post" action="/dashboard/teams/${team.id}/billing/credit" class="row-form subform" id="credit-form">
  ${csrfField(viewer)}
  <label class="field">Amount<input name="amount" id="credit-amount" inputmode="decimal" autocomplete="off" required placeholder="e.g. 25.00" value="${typed?.amount ?? ""}" aria-invalid="${bad}" aria-describedby="credit-error"></label>
  <label class="field grow">Note (optional)<input name="note" id="credit-note" maxlength="${MAX_NOTE}" autocomplete="off" placeholder="e.g. invoice 2024-117" value="${typed?.note ?? ""}"></label>
  <button type="submit" class="btn btn-primary">Add credit</button>
</form>
${errorFor(p, "credit")}`;
}

function switchForms(viewer: Viewer, team: Team, account: BillingAccount | undefined, p: FormProblem | undefined): Html {
  const billing = team.billingEnabled
    ? html`<form method="post" action="/dashboard/teams/${team.id}/billing/enabled" class="row-form subform" id="billing-form" data-confirm="Turn billing off for team ${team.name}? Its requests become free.">
  ${csrfField(viewer)}<input type="hidden" name="billing" value="off">
  <span class="grow">Billing is on.</span>
  <button type="submit" class="btn btn-danger">Turn billing off</button>
</form>`
    : html`<form method="post" action="/dashboard/teams/${team.id}/billing/enabled" class="row-form subform" id="billing-form">
  ${csrfField(viewer)}<input type="hidden" name="billing" value="on">
  <span class="grow">Billing is off. Turning it on opens an account (balance 0.00) if there is none; requests are then charged, and refused with 402 when the balance cannot cover them.</span>
  <button type="submit" class="btn btn-primary">Turn billing on</button>
</form>`;
  const lapse = !account
    ? html`<p class="hint subform" id="no-account">Team "${team.name}" has no billing account yet, so there is nothing to lapse. Turning billing on or adding credit opens one.</p>`
    : account.lapsedAt !== null
      ? html`<form method="post" action="/dashboard/teams/${team.id}/billing/lapse" class="row-form subform" id="lapse-form">
  ${csrfField(viewer)}<input type="hidden" name="lapse" value="reinstate">
  <span class="grow">The account lapsed ${time(account.lapsedAt)}.</span>
  <button type="submit" class="btn btn-primary">Reinstate account</button>
</form>`
      : html`<form method="post" action="/dashboard/teams/${team.id}/billing/lapse" class="row-form subform" id="lapse-form" data-confirm="Lapse team ${team.name}'s account? While billing is on, every request of the team gets 402.">
  ${csrfField(viewer)}<input type="hidden" name="lapse" value="lapse">
  <span class="grow">Lapse the account when payment failed: while billing is on, every request of the team gets 402 until it is reinstated.</span>
  <button type="submit" class="btn btn-danger">Lapse account</button>
</form>`;
  return html`${billing}${errorFor(p, "billing")}${lapse}${errorFor(p, "lapse")}`;
}

function ledgerRow(r: LedgerRow): Html {
  // A charge names its request, and its service tier and price factor when it was not the list price.
  const detail = r.kind === "charge" ? html`${r.requestId ? html`<code>${r.requestId}</code>` : "–"}${r.note ? html` <span class="hint-inline">${r.note}</span>` : ""}` : r.note ?? "–";
  return html`<tr data-ledger-id="${r.id}">
  <td class="when">${time(r.createdAt)}</td>
  <td><span class="badge${r.kind === "credit" ? " good" : ""}">${r.kind}</span></td>
  <td class="num">${signed(r.amountMicros)}</td>
  <td class="num">${fmtMoney(r.balanceAfterMicros)}</td>
  <td class="detail">${detail}</td>
</tr>`;
}

function ledgerCard(v: BillingView): Html {
  const { rows, before, olderBefore } = v.ledger;
  const base = `/dashboard/teams/${v.team.id}/billing`;
  const table = rows.length
    ? html`<div class="table-wrap"><table class="table" id="ledger-table">
  <thead><tr><th>Time</th><th>Kind</th><th class="num">Amount</th><th class="num">Balance after</th><th>Request or note</th></tr></thead>
  <tbody>${rows.map(ledgerRow)}</tbody>
</table></div>`
    : html`<p class="empty" id="ledger-empty">${before === null ? `No ledger entries for team "${v.team.name}" yet. Credits and, while billing is on, one charge per request appear here.` : "No older entries."}</p>`;
  const pager = before !== null || olderBefore !== null
    ? html`<nav class="pager" aria-label="Ledger pages">
  ${before !== null ? html`<a class="btn btn-small" id="ledger-newest" href="${base}#ledger">Newest</a>` : ""}
  ${olderBefore !== null ? html`<a class="btn btn-small" id="ledger-older" href="${base}?before=${olderBefore}#ledger">Older</a>` : ""}
</nav>`
    : "";
  return html`<section class="card" id="ledger" aria-labelledby="ledger-title">
  <h2 id="ledger-title">Ledger</h2>
  ${table}
  ${pager}
</section>`;
}

/** The page's content for `viewer`; forms that change anything only when the viewer is an operator. */
export function billingBody(viewer: Viewer, v: BillingView, problem?: FormProblem): Html {
  const { team, account } = v;
  const operator = viewer.operator;
  return html`<h1>Limits &amp; billing</h1>
<div class="stats">
  <div class="stat"><div class="label">Tier</div><div class="value" id="tier">${v.limits.tier ?? "none"}</div></div>
  ${useTile("rpm-use", "Requests this minute", describeUse(v.limits.rpm, v.snapshot.requests, "requests"))}
  ${useTile("tpm-use", "Tokens this minute", describeUse(v.limits.tpm, v.snapshot.tokens, "tokens"))}
  <div class="stat"><div class="label">Balance</div><div class="value" id="balance">${account ? fmtMoney(account.balanceMicros) : "–"}</div><div class="sub">${billingBadge(team, account)}</div></div>
</div>
<section class="card" id="limits" aria-labelledby="limits-title">
  <h2 id="limits-title">Limits</h2>
  <dl class="facts">
    <dt>Tier</dt><dd id="tier-fact">${tierFact(v)}</dd>
    <dt>Requests per minute</dt><dd id="rpm-limit">${limitFact(v.limits.rpm, team.rpmLimit)}</dd>
    <dt>Tokens per minute</dt><dd id="tpm-limit">${limitFact(v.limits.tpm, team.tpmLimit)}</dd>
  </dl>
  <p class="hint">The limits are shared by all of the team's keys. A request past the RPM, or whose prompt and largest possible answer do not fit in the TPM, gets 429. Changes apply from the next request.</p>
  ${operator ? tierForm(viewer, v, problem) : ""}
</section>
<section class="card" id="billing" aria-labelledby="billing-title">
  <h2 id="billing-title">Billing</h2>
  <dl class="facts">
    <dt>Billing</dt><dd>${team.billingEnabled ? "on" : "off"}</dd>
    <dt>Account</dt><dd id="account">${account ? html`opened ${time(account.createdAt)}` : "none"}</dd>
    <dt>Balance</dt><dd>${account ? fmtMoney(account.balanceMicros) : "–"}</dd>
    <dt>Lapsed</dt><dd id="lapsed">${account && account.lapsedAt !== null ? html`<span class="badge bad">since ${fmtTime(account.lapsedAt)}</span>` : "no"}</dd>
  </dl>
  <p class="hint" id="billing-sentence">${billingSentence(team, account)}</p>
  ${operator
    ? html`${creditForm(viewer, team, problem)}${switchForms(viewer, team, account, problem)}`
    : html`<p class="hint">Only an operator can change the tier, add credit, or turn billing on or off.</p>`}
</section>
${serviceTiersCard(viewer, team, v.tierPrices, html`<div class="stats">
  ${useTile("bulk-rpm-use", "Flex and batch requests this minute", describeUse(v.limits.rpm, v.bulk.requests, "requests"))}
  ${useTile("bulk-tpm-use", "Flex and batch tokens this minute", describeUse(v.limits.tpm, v.bulk.tokens, "tokens"))}
</div>`, problem?.form === "service-tiers" ? problem.message : undefined)}
${ledgerCard(v)}`;
}
