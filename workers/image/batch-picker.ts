// Picks the UNet rows of the next denoising pass: the render that has waited longest leads, its group (rows that can
// share a tensor) fills the pass oldest first up to the row limit. Pure: the engine keeps the state.

export type RowKind = "uncond" | "cond";

export interface Candidate {
  id: string;
  /** Rows with equal keys may share a pass: same latent shape and text length (and timestep, when the graph shares one). */
  key: string;
  /** Pass number of its last completed step (of its arrival, before any): lower has waited longer. */
  lastServed: number;
  /** Arrival order, breaking ties. */
  seq: number;
  /** Rows its current step still needs, in order. */
  pending: RowKind[];
}

export interface PickedRow {
  id: string;
  kind: RowKind;
}

/**
 * Up to `capacity` rows of one group. The longest-waiting render picks the group, so groups of different shapes take
 * turns and none starves; within the group older renders go first. A render whose rows do not all fit gives what
 * fits (its step completes on a later pass, which it then leads as the longest-waiting).
 */
export function pickRows(candidates: readonly Candidate[], capacity: number): PickedRow[] {
  const ready = candidates.filter((c) => c.pending.length > 0).sort((a, b) => a.lastServed - b.lastServed || a.seq - b.seq);
  const leader = ready[0];
  if (!leader) return [];
  const rows: PickedRow[] = [];
  for (const c of ready) {
    if (c.key !== leader.key) continue;
    for (const kind of c.pending) {
      if (rows.length >= capacity) return rows;
      rows.push({ id: c.id, kind });
    }
  }
  return rows;
}
