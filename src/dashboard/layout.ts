// The frame of every dashboard page: head (kiln's own stylesheet and script), the top bar with the signed-in
// user and sign-out, the tabs (a team's tabs, then the service's), the one-shot notice, and the page's content.
import type { Team } from "../db/teams-repo.ts";
import { type Html, html } from "./html.ts";
import { assetUrl } from "./assets.ts";
import type { Viewer } from "./viewer.ts";

export type TabId = "keys" | "usage" | "billing" | "responses" | "batches" | "models" | "status" | "teams";

export interface PageFrame {
  title: string;
  viewer: Viewer;
  /** The team the page is about (a member's own team on every page). */
  team?: Team | null;
  tab: TabId;
  body: Html;
  /** The page draws charts: uPlot's script and stylesheet are loaded before kiln's script. */
  charts?: boolean;
}

const TEAM_TABS: [TabId, string, string][] = [
  ["keys", "API keys", "keys"],
  ["usage", "Usage", "usage"],
  ["billing", "Limits & billing", "billing"],
  ["responses", "Responses", "responses"],
  ["batches", "Batches", "batches"],
];

export function head(title: string, charts = false): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${title} · kiln</title>
<link rel="stylesheet" href="${assetUrl("dashboard.css")}">
<link rel="icon" href="${assetUrl("favicon.svg")}" type="image/svg+xml">
${charts ? html`<link rel="stylesheet" href="${assetUrl("uplot.css")}">
<script src="${assetUrl("uplot.js")}" defer></script>` : ""}
<script src="${assetUrl("dashboard.js")}" defer></script>
</head>`;
}

function tabLink(id: TabId, label: string, href: string, current: TabId): Html {
  return html`<a class="tab${id === current ? " current" : ""}" href="${href}"${id === current ? html` aria-current="page"` : ""}>${label}</a>`;
}

export function layout(f: PageFrame): Html {
  const v = f.viewer;
  const team = f.team ?? null;
  const tabs: Html[] = [];
  if (team) for (const [id, label, path] of TEAM_TABS) tabs.push(tabLink(id, label, `/dashboard/teams/${team.id}/${path}`, f.tab));
  tabs.push(tabLink("models", "Models", "/dashboard/models", f.tab), tabLink("status", "Status", "/dashboard/status", f.tab));
  if (v.operator) tabs.push(tabLink("teams", "Teams", "/dashboard/teams", f.tab));
  const flash = v.flash?.notice ? html`<p class="notice" role="status">${v.flash.notice}</p>` : "";
  return html`<html lang="en">
${head(f.title, f.charts)}
<body>
<header class="topbar">
  <a class="brand" href="/dashboard">kiln</a>
  ${team ? html`<span class="team-name" title="Team">${team.name}${v.operator ? html` <a class="switch" href="/dashboard/teams">change</a>` : ""}</span>` : ""}
  <span class="spacer"></span>
  <span class="who">${v.user.username} <span class="role">${v.operator ? "operator" : "member"}</span></span>
  <form method="post" action="/dashboard/logout" class="inline">
    ${csrfField(v)}
    <button type="submit" class="btn btn-quiet">Sign out</button>
  </form>
</header>
<nav class="tabs" aria-label="Dashboard">${tabs}</nav>
<main>
${flash}
${f.body}
</main>
</body>
</html>`;
}

/** A page for someone not signed in (sign-in, errors before a session): the same look without tabs. */
export function bareLayout(title: string, body: Html): Html {
  return html`<html lang="en">
${head(title)}
<body class="bare">
<header class="topbar"><a class="brand" href="/dashboard">kiln</a></header>
<main class="narrow">${body}</main>
</body>
</html>`;
}

/** The hidden CSRF field every form of a signed-in page carries. */
export function csrfField(v: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${v.session.csrfToken}">`;
}
