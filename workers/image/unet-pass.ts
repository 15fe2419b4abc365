// One denoising pass: the batch picker's rows (renders of one latent shape, each at its own step) through the UNet,
// then each render whose step has all its rows takes its scheduler step.
import { type Candidate, pickRows, type RowKind } from "./batch-picker.ts";
import type { Job, JobBoard } from "./jobs.ts";
import type { DiffusionModel } from "./load-diffusion.ts";
import { allFinite } from "./pixels.ts";
import { fedTimestep, type UnetRow } from "./unet-runner.ts";

const KINDS: RowKind[] = ["uncond", "cond"];

/** Which rows may share a tensor: latent shape, text dims, and the timestep when the graph takes one for all rows. */
export function groupKey(job: Job, model: DiffusionModel): string {
  const { channels, height, width } = job.shape;
  const e = job.embeddings.cond!;
  const io = model.unet.io;
  const t = io.timestep === "shared" ? `|t${fedTimestep(job.denoiser!.timestep, io.timestepType)}` : "";
  return `${channels}x${height}x${width}|${e.seqLen}x${e.hidden}${t}`;
}

export function candidates(jobs: Job[], model: DiffusionModel): Candidate[] {
  return jobs
    .filter((j) => j.denoiser && !j.denoiser.done)
    .map((j) => ({
      id: j.id,
      key: groupKey(j, model),
      lastServed: j.lastServed,
      seq: j.seq,
      pending: KINDS.filter((k) => j.textKeys[k] !== undefined && !j.outs[k]),
    }));
}

/** Runs one UNet pass (pass number `pass`); false when no render is denoising. */
export async function unetPass(board: JobBoard, model: DiffusionModel, maxBatch: number, pass: number): Promise<boolean> {
  const picked = pickRows(candidates(board.list(), model), model.unet.passRows(maxBatch));
  if (picked.length === 0) return false;
  const started = performance.now();
  const jobs = picked.map((p) => board.jobs.get(p.id)!);
  const rows: UnetRow[] = picked.map((p, i) => {
    const d = jobs[i]!.denoiser!;
    return { sample: d.modelInput(), timestep: d.timestep, hidden: jobs[i]!.embeddings[p.kind]! };
  });
  let outs: Float32Array[];
  try {
    outs = await model.unet.run(rows, jobs[0]!.shape);
  } catch (e) {
    for (const job of new Set(jobs)) board.fail(job, false, `UNet failed: ${e instanceof Error ? e.message : String(e)}`);
    return true;
  }
  const stepped = new Set<Job>();
  picked.forEach((p, i) => {
    const job = jobs[i]!;
    if (!board.jobs.has(job.id)) return;
    if (!allFinite(outs[i]!)) return board.fail(job, true, "the UNet's output is not finite");
    job.outs[p.kind] = outs[i]!;
    if (KINDS.every((k) => job.textKeys[k] === undefined || job.outs[k])) stepped.add(job);
  });
  for (const job of stepped) {
    if (!board.jobs.has(job.id)) continue;
    job.denoiser!.advance(job.outs.cond!, job.outs.uncond);
    job.outs = {};
    job.lastServed = pass;
  }
  // The pass's time (feeds, run, scheduler steps) is shared evenly by its rows.
  const perRow = (performance.now() - started) / picked.length;
  for (const job of jobs) job.timings.denoiseMs += perRow;
  return true;
}
