// Rewrites references to the schema's root ("$ref": "#") into a reference to a definition holding the root.
// xgrammar 0.1.27 builds a too-small token mask after a value that recursed through "#": a token that closes
// the inner object and goes on (`},`) is refused by the mask yet accepted by the matcher. Recursion through
// "$defs" has no such gap, so the root is moved there.

type Schema = Record<string, unknown>;

function mentionsRoot(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(mentionsRoot);
  if (typeof v !== "object" || v === null) return false;
  return Object.entries(v).some(([k, x]) => (k === "$ref" && x === "#") || mentionsRoot(x));
}

function replaceRoot(v: unknown, ref: string): unknown {
  if (Array.isArray(v)) return v.map((x) => replaceRoot(x, ref));
  if (typeof v !== "object" || v === null) return v;
  const out: Schema = {};
  for (const [k, x] of Object.entries(v)) out[k] = k === "$ref" && x === "#" ? ref : replaceRoot(x, ref);
  return out;
}

/** The same schema with "#" references pointing at a `$defs` entry that holds the root; unchanged otherwise. */
export function hoistRootRecursion(schema: Schema): Schema {
  if (!mentionsRoot(schema)) return schema;
  const { $defs, definitions, ...root } = schema as Schema & { $defs?: Schema; definitions?: Schema };
  let name = "root";
  while ($defs && Object.hasOwn($defs, name)) name += "_";
  const ref = `#/$defs/${name}`;
  const out: Schema = { $defs: { ...(replaceRoot($defs ?? {}, ref) as Schema), [name]: replaceRoot(root, ref) }, $ref: ref };
  if (definitions !== undefined) out.definitions = replaceRoot(definitions, ref);
  return out;
}
