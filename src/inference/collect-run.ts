// A run's choices gathered whole, for answers that are not streamed: one choice failing stops the others (the request
// is recorded as failed), and a run the time limit stopped is the timeout error, not a partial answer.
import { ApiError } from "../errors/api-error.ts";
import { type ChoiceResult, collectChoice, type Usage } from "./blocks.ts";
import type { Run } from "./text-run.ts";

export async function collectRun(run: Run, timeoutMs: number): Promise<{ results: ChoiceResult[]; usage: Usage }> {
  let results: ChoiceResult[];
  try {
    results = await Promise.all(run.choices.map((c) => collectChoice(c)));
  } catch (e) {
    run.abort("failed");
    throw e;
  }
  if (run.abortReason === "timed_out") throw ApiError.timeout(timeoutMs);
  const { usage } = await run.settled;
  return { results, usage };
}
