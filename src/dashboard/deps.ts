// What dashboard pages use: the app's dependencies plus the dashboard's own in-memory parts.
import type { AppDeps } from "../app-deps.ts";
import { LoginLimiter } from "./accounts/login-limiter.ts";
import { FlashStore } from "./flash.ts";

export interface DashboardDeps extends AppDeps {
  /** Failed sign-ins per account and per address. */
  logins: LoginLimiter;
  /** Messages (and a new key) from a form's redirect to the next page. */
  flash: FlashStore;
}

export function dashboardDeps(deps: AppDeps): DashboardDeps {
  return { ...deps, logins: new LoginLimiter(), flash: new FlashStore() };
}
