// Test helper: an engine whose token bytes spell each id ("17,"), so a sequence's text gives back its exact tokens,
// with its reports, batch records and wakes kept, and a run that steps until named sequences finish.
import type { SeqDelta, SeqFinish, StepBatch } from "../../../src/protocol/text.ts";
import { Engine } from "../../../workers/text/engine.ts";
import type { ModelRunner } from "../../../workers/text/model-runner.ts";
import type { PrefixReuse } from "../../../workers/text/prefix-reuse.ts";
import { waitFor } from "../../helpers/wait-for.ts";

const enc = new TextEncoder();
export const tokenBytes = (id: number) => enc.encode(`${id},`);
export const tokensOf = (text: string) => text.split(",").filter(Boolean).map(Number);

export function engineHarness<R extends ModelRunner<any>>(runner: R, opts: { maxBatch?: number; budget?: number; prefix?: PrefixReuse } = {}) {
  const reports: { deltas: SeqDelta[]; finished: SeqFinish[]; batch?: StepBatch }[] = [];
  let wakes = 0;
  /** The engine's clock: virtual, so a wait the engine takes (the grace background work gives) passes at once. */
  const clock = { ms: 0, now: () => clock.ms, sleep: async (ms: number) => void (clock.ms += ms) };
  const engine = new Engine(runner, {
    clock,
    maxBatch: opts.maxBatch ?? 4,
    tokenBytes,
    prefillTokenBudget: opts.budget,
    ...(opts.prefix ? { prefix: opts.prefix } : {}),
    emit: (deltas, finished, batch) => reports.push({ deltas, finished, ...(batch ? { batch } : {}) }),
    wake: () => wakes++,
  });
  const tokens = (id: string) => tokensOf(reports.flatMap((r) => r.deltas.filter((d) => d.seqId === id).map((d) => d.text)).join(""));
  const finish = (id: string) => reports.flatMap((r) => r.finished).find((f) => f.seqId === id);
  /** engine.lastStep after each step run() took. */
  const steps: Engine["lastStep"][] = [];
  /** Steps while there is work, then waits for pending preprocessing until every named sequence has finished. */
  const run = async (...ids: string[]) => {
    await waitFor(
      async () => {
        while (engine.hasWork()) {
          await engine.step();
          steps.push({ ...engine.lastStep });
        }
        return ids.every((id) => finish(id));
      },
      { what: `${ids.join(", ")} to finish` },
    );
  };
  return { engine, runner, reports, steps, tokens, finish, run, clock, wakes: () => wakes };
}

