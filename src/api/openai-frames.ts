// The OpenAI formats' streams (Chat Completions and legacy completions): `data: {chunk}` frames from a format's chunk
// encoder, the usage chunk when asked for, then `data: [DONE]`; an error ends the stream with its body and no [DONE].
import type { SseFrame, StreamEnd } from "../http/sse-writer.ts";
import type { CoreEvent, Usage } from "../inference/blocks.ts";
import type { Run } from "../inference/text-run.ts";
import { mergeStreams } from "../inference/merge.ts";

export interface ChunkEncoder {
  /** The chunks one event of choice `index` becomes. */
  encode(index: number, ev: CoreEvent): object[];
  /** The last chunk before [DONE] when the request set stream_options.include_usage. */
  usage(u: Usage): object;
}

const data = (payload: object | string): SseFrame => ({ data: typeof payload === "string" ? payload : JSON.stringify(payload) });

export async function* openaiFrames(run: Run, encoder: ChunkEncoder, includeUsage: boolean): AsyncGenerator<SseFrame, StreamEnd> {
  for await (const { index, item } of mergeStreams(run.choices)) {
    if (item.type === "usage") continue;
    if (item.type === "error") {
      yield data(item.error.toBody());
      return { outcome: "error", code: item.error.code };
    }
    for (const chunk of encoder.encode(index, item)) yield data(chunk);
  }
  if (includeUsage) yield data(encoder.usage((await run.settled).usage));
  yield data("[DONE]");
  return { outcome: "completed" };
}
