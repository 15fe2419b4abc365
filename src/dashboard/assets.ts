// The dashboard's static files, embedded in the executable: kiln's stylesheet, its script and icon, and uPlot (the
// charts) from its npm package. Nothing is fetched from anywhere else, so the dashboard works offline.
import uplotJsPath from "uplot/dist/uPlot.iife.min.js" with { type: "file" };
import uplotCssPath from "uplot/dist/uPlot.min.css" with { type: "file" };
import pkg from "../../package.json" with { type: "json" };
import cssPath from "./static/dashboard.css" with { type: "file" };
import jsPath from "./static/dashboard.js" with { type: "file" };
import iconPath from "./static/favicon.svg" with { type: "file" };

interface Asset {
  path: string;
  contentType: string;
}

const ASSETS = new Map<string, Asset>([
  ["dashboard.css", { path: cssPath, contentType: "text/css; charset=utf-8" }],
  ["dashboard.js", { path: jsPath, contentType: "text/javascript; charset=utf-8" }],
  ["favicon.svg", { path: iconPath, contentType: "image/svg+xml" }],
  ["uplot.js", { path: uplotJsPath, contentType: "text/javascript; charset=utf-8" }],
  ["uplot.css", { path: uplotCssPath, contentType: "text/css; charset=utf-8" }],
]);

export const ASSET_BASE = "/dashboard/assets";

/** An asset's URL, versioned so a new kiln's files are never read from an old cache. */
export function assetUrl(name: string): string {
  if (!ASSETS.has(name)) throw new Error(`no dashboard asset ${name}`);
  return `${ASSET_BASE}/${name}?v=${pkg.version}`;
}

const loaded = new Map<string, Promise<Uint8Array<ArrayBuffer>>>();

/** The asset's bytes (read once from disk or the executable) and type; null for a name that is not one. */
export async function loadAsset(name: string): Promise<{ bytes: Uint8Array<ArrayBuffer>; contentType: string } | null> {
  const asset = ASSETS.get(name);
  if (!asset) return null;
  let bytes = loaded.get(name);
  if (!bytes) loaded.set(name, (bytes = Bun.file(asset.path).bytes()));
  return { bytes: await bytes, contentType: asset.contentType };
}
