// The team a service-wide page (Models, Status) names in its frame: none for an operator, the member's own team for
// a member, so a member keeps their team's tabs on these pages too.
import { findTeam, type Team } from "../../db/teams-repo.ts";
import type { DashboardDeps } from "../deps.ts";
import type { Viewer } from "../viewer.ts";

export async function frameTeam(d: DashboardDeps, v: Viewer): Promise<Team | null> {
  if (v.operator || v.user.teamId === null) return null;
  return (await findTeam(d.db, v.user.teamId)) ?? null;
}
