// Reads ffprobe's JSON report and ffmpeg's messages into the few facts a decode needs: tracks, size, duration, truncation.

export interface ProbeReport {
  /** A picture track (cover art attached to audio does not count). */
  video: { width: number; height: number; durationS: number | null } | null;
  /** `channels`: 0 when ffprobe did not say. */
  audio: { durationS: number | null; channels: number } | null;
  /** The container's duration. */
  durationS: number | null;
}

interface ProbeStream {
  codec_type?: string;
  width?: number;
  height?: number;
  channels?: number;
  duration?: string;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
  side_data_list?: { rotation?: number }[];
}

const seconds = (raw: string | undefined): number | null => {
  if (raw === undefined) return null;
  const n = Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : null;
};

/** Matroska keeps a track's duration in a DURATION tag, "HH:MM:SS.fffffffff". */
function tagDuration(tags: Record<string, string> | undefined): number | null {
  const m = /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(tags?.DURATION ?? "");
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : null;
}

const streamDuration = (s: ProbeStream): number | null => seconds(s.duration) ?? tagDuration(s.tags);

/** A phone video stored on its side plays rotated: its displayed width and height are swapped. */
function rotated(s: ProbeStream): boolean {
  const rotation = s.side_data_list?.find((d) => typeof d.rotation === "number")?.rotation ?? Number(s.tags?.rotate ?? 0);
  return Math.abs(rotation) % 180 === 90;
}

/** The report, or null when ffprobe could not read the input (its text is then empty or not a report). */
export function readProbe(text: string): ProbeReport | null {
  let json: { streams?: ProbeStream[]; format?: { duration?: string } };
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  if (!json.format || !Array.isArray(json.streams)) return null;
  const picture = json.streams.find((s) => s.codec_type === "video" && s.disposition?.attached_pic !== 1 && (s.width ?? 0) > 0 && (s.height ?? 0) > 0);
  const sound = json.streams.find((s) => s.codec_type === "audio");
  const durationS = seconds(json.format.duration);
  let video: ProbeReport["video"] = null;
  if (picture) {
    const [w, h] = rotated(picture) ? [picture.height!, picture.width!] : [picture.width!, picture.height!];
    video = { width: w, height: h, durationS: streamDuration(picture) ?? durationS };
  }
  const audio = sound ? { durationS: streamDuration(sound) ?? (picture ? null : durationS), channels: sound.channels ?? 0 } : null;
  return { video, audio, durationS };
}

/**
 * The filter mixing `channels` down to mono as the mean of all channels (what Whisper's and librosa's loaders do);
 * ffmpeg's own `-ac 1` weights stereo by 1/√2 a side, making a centred sound 3 dB louder. Unknown count: `-ac 1`'s mix.
 */
export function monoMix(channels: number): string {
  if (channels < 2) return "aformat=channel_layouts=mono";
  const gain = (1 / channels).toPrecision(6);
  return `pan=mono|c0=${Array.from({ length: channels }, (_, i) => `${gain}*c${i}`).join("+")}`;
}

/** ffmpeg's words for input that stops early (a cut download, an unfinished recording). */
const TRUNCATION = /moov atom not found|file ended prematurely|truncat|end of file|partial file|premature end/i;

export const mentionsTruncation = (log: string[]): boolean => log.some((line) => TRUNCATION.test(line));

/**
 * Whether a decode that produced `gotS` seconds of a track said to last `statedS` stopped early. The margin
 * allows for duration estimates (an mp3 without a header is measured from its first frame's bitrate).
 */
export function fellShort(gotS: number, statedS: number | null): boolean {
  return statedS !== null && statedS > 0.5 && gotS < statedS * 0.8 - 0.25;
}
