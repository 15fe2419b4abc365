// The dashboard at /dashboard: sign-in, its static files, and the tabs. Every route declares its edge policy:
// pages read no body, form posts hand their small body to the page (which checks the session and CSRF token).
import { Elysia } from "elysia";
import type { AppDeps } from "../app-deps.ts";
import { edgePolicies, POLICY } from "../http/edge-policy.ts";
import { ASSET_BASE, loadAsset } from "./assets.ts";
import { dashboardDeps } from "./deps.ts";
import { PageError } from "./page-error.ts";
import { HIDDEN, errorPage, formPost, openPage, page } from "./page.ts";
import { redirect, SECURITY_HEADERS } from "./respond.ts";
import { showLogin, signIn, signOut } from "./sign-in.ts";
import { batchesTab } from "./tabs/batches.ts";
import { billingTab } from "./tabs/billing.ts";
import { keysTab } from "./tabs/keys.ts";
import { responsesTab } from "./tabs/responses.ts";
import { modelsTab } from "./tabs/models.ts";
import { statusTab } from "./tabs/status.ts";
import { teamsTab } from "./tabs/teams.ts";
import { usageTab } from "./tabs/usage.ts";


export function dashboardRoutes(deps: AppDeps) {
  const d = dashboardDeps(deps);
  return new Elysia({ name: "dashboard" })
    .use(edgePolicies)
    .get(
      `${ASSET_BASE}/:name`,
      async ({ params }) => {
        const asset = await loadAsset(params.name);
        if (!asset) return errorPage(PageError.notFound());
        return new Response(asset.bytes, {
          headers: { ...SECURITY_HEADERS, "content-type": asset.contentType, "cache-control": "public, max-age=86400" },
        });
      },
      { edge: POLICY.page, ...HIDDEN },
    )
    .get("/dashboard/login", openPage(d, (c) => showLogin(d, c)), { edge: POLICY.page, ...HIDDEN })
    .post("/dashboard/login", openPage(d, (c) => signIn(d, c)), { edge: POLICY.pageForm, ...HIDDEN })
    .post("/dashboard/logout", formPost(d, (c) => signOut(d, c)), { edge: POLICY.pageForm, ...HIDDEN })
    .get(
      "/dashboard",
      page(d, ({ viewer }) => redirect(viewer.operator || viewer.user.teamId === null ? "/dashboard/teams" : `/dashboard/teams/${viewer.user.teamId}/keys`)),
      { edge: POLICY.page, ...HIDDEN },
    )
    .use(teamsTab(d))
    .use(keysTab(d))
    .use(usageTab(d))
    .use(billingTab(d))
    .use(responsesTab(d))
    .use(batchesTab(d))
    .use(statusTab(d))
    .use(modelsTab(d))
    // Anything else under /dashboard: sign in first (which paths exist is not for strangers), then a page saying so.
    .get("/dashboard/*", page(d, () => errorPage(PageError.notFound())), { edge: POLICY.page, ...HIDDEN });
}
