// What dashboard pages use: the app's dependencies plus the dashboard's own stores, in this process's memory, or in
// the Redis the replicas share (a sign-in may be counted, and a redirect followed, on another replica).
import type { AppDeps } from "../app-deps.ts";
import { type LoginLimiter, MemoryLoginLimiter } from "./accounts/login-limiter.ts";
import { RedisLoginLimiter } from "./accounts/redis-login-limiter.ts";
import { type FlashStore, MemoryFlashStore } from "./flash.ts";
import { RedisFlashStore } from "./redis-flash.ts";

export interface DashboardDeps extends AppDeps {
  /** Failed sign-ins per (name, address) and per address. */
  logins: LoginLimiter;
  /** Messages (and a new key) from a form's redirect to the next page. */
  flash: FlashStore;
}

export function dashboardDeps(deps: AppDeps): DashboardDeps {
  const s = deps.shared;
  if (s) return { ...deps, logins: new RedisLoginLimiter(s.redis), flash: new RedisFlashStore(s.redis, s.flashKey) };
  return { ...deps, logins: new MemoryLoginLimiter(), flash: new MemoryFlashStore() };
}
