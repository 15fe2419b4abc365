// Reads a text/event-stream answer frame by frame (`event:` and `data:` lines), up to a frame the caller stops at,
// then leaves the stream as a client that has what it needs would.
export interface SseFrame {
  event: string | null;
  /** The data line: parsed JSON, or the raw text (`[DONE]`). */
  data: any;
}

/** Frames of `res` until `stop(frame)` is true (that frame included) or the stream ends; the rest is not read. */
export async function readFrames(res: Response, stop: (frame: SseFrame) => boolean = () => false): Promise<SseFrame[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const frames: SseFrame[] = [];
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return frames;
      buf += decoder.decode(value, { stream: true });
      for (let end = buf.indexOf("\n\n"); end >= 0; end = buf.indexOf("\n\n")) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const frame = parseFrame(block);
        if (!frame) continue;
        frames.push(frame);
        if (stop(frame)) return frames;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

function parseFrame(block: string): SseFrame | null {
  let event: string | null = null;
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
  }
  if (!data.length) return null;
  const text = data.join("\n");
  try {
    return { event, data: JSON.parse(text) };
  } catch {
    return { event, data: text };
  }
}
