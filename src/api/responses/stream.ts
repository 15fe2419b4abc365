// Streams a Responses answer: the assembler's events as `event: <type>` frames with gapless sequence numbers, no [DONE].
import type { SseFrame, StreamEnd } from "../../http/sse-writer.ts";
import type { Run } from "../../inference/text-run.ts";
import type { ResponseAssembler, ResponseEvent } from "./assembler.ts";

/** Numbers events from 0 without gaps and frames each with its type as the event name. */
export class SequencedFrames {
  private next = 0;

  frame(ev: ResponseEvent): SseFrame {
    return { event: ev.type, data: JSON.stringify({ ...ev, sequence_number: this.next++ }) };
  }
}

export async function* responseFrames(run: Run, asm: ResponseAssembler, seq = new SequencedFrames()): AsyncGenerator<SseFrame, StreamEnd> {
  for (const ev of asm.start()) yield seq.frame(ev);
  for await (const core of run.choices[0]!) {
    for (const ev of asm.push(core)) {
      yield seq.frame(ev);
      // The terminal events close the stream; nothing follows them.
      if (ev.type === "error") return { outcome: "error", code: (ev.code as string | null) ?? null };
      if (ev.type === "response.failed") return { outcome: "error", code: "server_error" };
    }
  }
  return { outcome: "completed" };
}
