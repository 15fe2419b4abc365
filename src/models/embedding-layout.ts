// How an embedding model turns a graph's token rows into one vector: the pooling and normalization a
// sentence-transformers folder declares (modules.json, the Pooling module's config.json), and the sizes kiln.json lets
// a request truncate to. Pure: parsed from the folder's JSON by src/models/embedding-folder.ts.

/** Pooling modes kiln runs (sentence-transformers' pooling_mode_* keys). */
export type PoolingMode = "mean" | "cls" | "lasttoken";

export interface EmbeddingLayout {
  pooling: PoolingMode;
  /** Whether vectors are scaled to unit length (a Normalize module). */
  normalize: boolean;
  /** The vector's full size (the graph's hidden size). */
  dimensions: number;
  /** Sizes a request's `dimensions` may truncate to, ascending, the full size last; [full] when none is declared. */
  truncations: number[];
}

const MODULE_TYPE = "sentence_transformers.models.";

/** The pooling a Pooling module's config.json turns on; throws when none or several are, or one kiln does not run. */
export function poolingMode(config: Record<string, unknown>): PoolingMode {
  const on = Object.entries(config).filter(([k, v]) => k.startsWith("pooling_mode_") && v === true).map(([k]) => k);
  const modes: Record<string, PoolingMode> = { pooling_mode_mean_tokens: "mean", pooling_mode_cls_token: "cls", pooling_mode_lasttoken: "lasttoken" };
  if (on.length !== 1) throw new Error(`the pooling config must turn on exactly one pooling_mode_* (found ${on.length ? on.join(", ") : "none"})`);
  const mode = modes[on[0]!];
  if (!mode) throw new Error(`${on[0]} is not a pooling kiln runs (mean_tokens, cls_token or lasttoken)`);
  return mode;
}

/** modules.json's Pooling module folder and whether a Normalize module follows; throws on anything else unexpected. */
export function readModules(modules: unknown): { poolingPath: string; normalize: boolean } {
  if (!Array.isArray(modules)) throw new Error("modules.json must be a list of modules");
  const types = modules.map((m) => (m && typeof m === "object" ? String((m as Record<string, unknown>).type ?? "") : ""));
  const pooling = modules[types.indexOf(`${MODULE_TYPE}Pooling`)] as Record<string, unknown> | undefined;
  if (!pooling || typeof pooling.path !== "string" || !pooling.path) throw new Error("modules.json has no Pooling module with a path");
  const known = new Set(["Transformer", "Pooling", "Normalize"].map((t) => MODULE_TYPE + t));
  const other = types.find((t) => !known.has(t));
  // A Dense projection or another module kiln does not run would change every vector: refuse rather than differ.
  if (other !== undefined) throw new Error(`modules.json lists ${other || "a module without a type"}, which kiln does not run`);
  return { poolingPath: pooling.path, normalize: types.includes(`${MODULE_TYPE}Normalize`) };
}

/** The sizes a request may ask for: kiln.json's `embedding.matryoshka_dimensions` (each ≤ the full size) and the full size. */
export function truncations(declared: unknown, full: number): number[] {
  if (declared === undefined) return [full];
  if (!Array.isArray(declared) || !declared.every((d) => Number.isInteger(d) && d >= 1 && d <= full)) {
    throw new Error(`"embedding.matryoshka_dimensions" must list whole sizes from 1 to ${full}`);
  }
  return [...new Set([...(declared as number[]), full])].sort((a, b) => a - b);
}
