// Where the images of an edit go on one canvas: a grid of equal cells (the rows chosen to show the images largest),
// each image scaled to fit its cell whole and centred in it. Pure.

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The grid that shows images of these aspect ratios (width / height) largest on a width × height canvas. */
export function gridLayout(aspects: readonly number[], width: number, height: number): Rect[] {
  const k = aspects.length;
  if (!k) return [];
  let best: Rect[] = [];
  let bestArea = -1;
  for (let rows = 1; rows <= k; rows++) {
    const cols = Math.ceil(k / rows);
    const rects = aspects.map((aspect, i) => {
      const cell = cellOf(i, rows, cols, width, height);
      return fitInside(aspect, cell);
    });
    const area = rects.reduce((sum, r) => sum + r.width * r.height, 0);
    if (area > bestArea) {
      bestArea = area;
      best = rects;
    }
  }
  return best;
}

/** Cell i of a rows × cols grid, filled row by row, with integer edges that tile the canvas exactly. */
function cellOf(i: number, rows: number, cols: number, width: number, height: number): Rect {
  const r = Math.floor(i / cols);
  const c = i % cols;
  const x0 = Math.round((c * width) / cols);
  const x1 = Math.round(((c + 1) * width) / cols);
  const y0 = Math.round((r * height) / rows);
  const y1 = Math.round(((r + 1) * height) / rows);
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** The largest rect of this aspect ratio inside `cell`, centred (at least one pixel each way). */
export function fitInside(aspect: number, cell: Rect): Rect {
  let width = cell.width;
  let height = Math.round(width / aspect);
  if (height > cell.height) {
    height = cell.height;
    width = Math.round(height * aspect);
  }
  width = Math.max(1, Math.min(cell.width, width));
  height = Math.max(1, Math.min(cell.height, height));
  return { x: cell.x + Math.floor((cell.width - width) / 2), y: cell.y + Math.floor((cell.height - height) / 2), width, height };
}

/** The aspect ratio of the images side by side at one height: what an edit asked for no size is nearest to. */
export function naturalAspect(aspects: readonly number[]): number {
  return aspects.reduce((sum, a) => sum + a, 0);
}

/**
 * A per-latent-cell mask from per-pixel edit weights (1 = may change): a cell may change when any pixel in it may, so
 * the whole masked area is rendered; the pixels outside the mask are restored afterwards (overlay).
 */
export function latentMask(weights: Float32Array, width: number, height: number, scale: number): Float32Array {
  const lw = width / scale;
  const lh = height / scale;
  const out = new Float32Array(lw * lh);
  for (let y = 0; y < height; y++) {
    const row = Math.floor(y / scale) * lw;
    for (let x = 0; x < width; x++) if (weights[y * width + x]! > 0) out[row + Math.floor(x / scale)] = 1;
  }
  return out;
}

/** Blends a rendered image over the original canvas: weight 1 takes the render, 0 keeps the original pixel exactly. */
export function overlay(rendered: Uint8Array, original: Uint8Array, weights: Float32Array): Uint8Array {
  const out = new Uint8Array(rendered.length);
  for (let p = 0; p < weights.length; p++) {
    const w = weights[p]!;
    for (let c = 0; c < 3; c++) {
      const i = p * 3 + c;
      out[i] = w >= 1 ? rendered[i]! : w <= 0 ? original[i]! : Math.round(w * rendered[i]! + (1 - w) * original[i]!);
    }
  }
  return out;
}
