// `kiln --version`: kiln's version and the versions of the runtime pieces it carries.
import { env as transformersEnv } from "@huggingface/transformers";
import * as ort from "onnxruntime-node";
import sharp from "sharp";
import { version as kilnVersion } from "../../package.json" with { type: "json" };

export interface Versions {
  kiln: string;
  bun: string;
  bunRevision: string;
  onnxruntime: string;
  transformers: string;
  sharp: string;
  libvips: string;
  platform: string;
  compiled: boolean;
}

export function collectVersions(): Versions {
  return {
    kiln: kilnVersion,
    bun: Bun.version,
    bunRevision: Bun.revision.slice(0, 9),
    onnxruntime: ort.env.versions.node ?? ort.env.versions.common,
    transformers: transformersEnv.version,
    sharp: sharp.versions.sharp ?? "unknown",
    libvips: sharp.versions.vips,
    platform: `${process.platform}-${process.arch}`,
    compiled: Bun.isStandaloneExecutable,
  };
}

/** First line `kiln <version>` (what scripts grep), then one aligned line per component. */
export function formatVersions(v: Versions): string {
  const rows: [string, string][] = [
    ["bun", `${v.bun} (${v.bunRevision})`],
    ["onnxruntime", `${v.onnxruntime} (onnxruntime-node, CPU)`],
    ["transformers.js", v.transformers],
    ["sharp", `${v.sharp} (libvips ${v.libvips})`],
    ["platform", `${v.platform}, ${v.compiled ? "single executable" : "from source"}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return [`kiln ${v.kiln}`, ...rows.map(([k, val]) => `  ${k.padEnd(width)}  ${val}`)].join("\n");
}

export function versionText(): string {
  return formatVersions(collectVersions());
}
