// The output sizes of an image model: a `size` a client asks for is reduced to the nearest supported aspect ratio, and
// each ratio has one pixel size near the model's pixel budget (its native resolution squared), in the multiples its
// VAE and UNet can run. Pure functions.

/** One supported aspect ratio and the pixel size it renders at. */
export interface ImageSize {
  /** "16:9". */
  ratio: string;
  width: number;
  height: number;
}

/** The aspect ratios of a model whose manifest names none. */
export const DEFAULT_ASPECT_RATIOS = ["1:1", "4:3", "3:4", "3:2", "2:3", "16:9", "9:16", "2:1", "1:2"] as const;

/** Sides past this many times the native resolution are not tried (a 1:8 image is still within it). */
const MAX_SIDE_FACTOR = 4;

/** "16:9" → [16, 9]; throws naming the value for anything else. */
export function parseAspectRatio(text: string): [number, number] {
  const m = /^(\d{1,3}):(\d{1,3})$/.exec(text);
  const w = m ? Number(m[1]) : 0;
  const h = m ? Number(m[2]) : 0;
  if (!(w > 0 && h > 0)) throw new Error(`aspect ratio "${text}" must be two positive whole numbers as "w:h"`);
  return [w, h];
}

/**
 * The pixel size of ratio w:h for a model of native side `resolution` whose sides are multiples of `multiple`: the
 * multiple pair that keeps the ratio best, then the pixel budget (a small area error costs less than a ratio error).
 */
export function sizeForRatio(ratio: string, resolution: number, multiple: number): ImageSize {
  const [rw, rh] = parseAspectRatio(ratio);
  const target = Math.log(rw / rh);
  const budget = resolution * resolution;
  const maxUnits = Math.max(1, Math.floor((resolution * MAX_SIDE_FACTOR) / multiple));
  let best: ImageSize | null = null;
  let bestScore = Infinity;
  for (let hu = 1; hu <= maxUnits; hu++) {
    const ideal = (hu * rw) / rh;
    for (const wu of new Set([Math.floor(ideal), Math.ceil(ideal)])) {
      if (wu < 1 || wu > maxUnits) continue;
      const width = wu * multiple;
      const height = hu * multiple;
      const score = Math.abs(Math.log(width / height) - target) + 0.25 * Math.abs(Math.log((width * height) / budget));
      if (score < bestScore - 1e-12) {
        bestScore = score;
        best = { ratio, width, height };
      }
    }
  }
  if (!best) throw new Error(`no size of ratio ${ratio} fits multiples of ${multiple}`);
  return best;
}

/** Every supported ratio's size, in the manifest's order; throws for a duplicate or unparseable ratio. */
export function supportedSizes(ratios: readonly string[], resolution: number, multiple: number): ImageSize[] {
  if (!ratios.length) throw new Error("an image model needs at least one aspect ratio");
  const seen = new Set<string>();
  return ratios.map((r) => {
    if (seen.has(r)) throw new Error(`aspect ratio "${r}" is listed twice`);
    seen.add(r);
    return sizeForRatio(r, resolution, multiple);
  });
}

/** A client's `size`: "auto" (null) or "<width>x<height>"; undefined when it is neither. */
export function parseSizeParam(size: string): { width: number; height: number } | null | undefined {
  if (size === "auto") return null;
  const m = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  if (!m) return undefined;
  const width = Number(m[1]);
  const height = Number(m[2]);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** The supported size whose ratio is nearest (in log ratio) to width:height; "auto" (null) takes the first listed. */
export function nearestSize(sizes: readonly ImageSize[], want: { width: number; height: number } | null): ImageSize {
  if (!want) return sizes[0]!;
  const target = Math.log(want.width / want.height);
  let best = sizes[0]!;
  let bestDistance = Infinity;
  for (const s of sizes) {
    const [rw, rh] = parseAspectRatio(s.ratio);
    const distance = Math.abs(Math.log(rw / rh) - target);
    if (distance < bestDistance - 1e-12) {
      bestDistance = distance;
      best = s;
    }
  }
  return best;
}
