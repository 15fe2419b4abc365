// Media worker: decodes one image, audio or video at a time off the event loop, for the pool in src/media/decode/decoder.ts.
import { decodeMedia } from "../src/media/decode/decode-media.ts";
import { FFmpegCrash } from "../src/media/decode/ffmpeg.ts";
import { transferables, type DecodeReply, type DecodeRequest } from "../src/media/decode/protocol.ts";
import { MediaDecodeError } from "../src/media/types.ts";

declare const self: Worker;

async function answer(req: DecodeRequest): Promise<DecodeReply> {
  try {
    return { id: req.id, ok: true, media: await decodeMedia(req.bytes, req.want, req.limits) };
  } catch (e) {
    if (e instanceof MediaDecodeError) return { id: req.id, ok: false, reason: e.reason, message: e.message };
    // ffmpeg trapped, or a library threw something unplanned: the input could not be decoded; the text goes to the log.
    const detail = e instanceof FFmpegCrash ? `ffmpeg crashed: ${e.message}` : e instanceof Error ? e.message : String(e);
    return { id: req.id, ok: false, reason: "corrupt", message: "", detail };
  }
}

self.onmessage = async (e: MessageEvent<DecodeRequest>) => {
  const reply = await answer(e.data);
  postMessage(reply, reply.ok ? transferables(reply.media) : []);
};
