// The JSON Schema subset both sides hold output to (OpenAI strict mode's): the main thread refuses a schema outside it
// with a 400 before any work, and the worker's grammar compiler checks it again. Pure, so both threads import it.
// xgrammar silently ignores keywords it does not know and aborts on some malformed input, so nothing reaches it
// unchecked: a schema outside the subset is refused here with the keyword and where it sits.

export type JsonType = "object" | "array" | "string" | "number" | "integer" | "boolean" | "null";

const TYPES: ReadonlySet<string> = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);

/** Keywords that only describe a schema: they change nothing the constraint must enforce. */
const ANNOTATIONS: ReadonlySet<string> = new Set(["title", "description", "default", "examples", "$comment", "$schema", "$id", "deprecated", "readOnly", "writeOnly"]);

const ASSERTIONS: ReadonlySet<string> = new Set(["type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref", "$defs", "definitions"]);

/** A schema the constraint cannot enforce; `keyword` names the offending keyword, `path` is a JSON Pointer to it. */
export class UnsupportedSchemaError extends Error {
  constructor(
    readonly keyword: string,
    readonly path: string,
    reason: string,
  ) {
    super(`JSON schema keyword "${keyword}" at ${path || "/"} is not supported for constrained output: ${reason}`);
    this.name = "UnsupportedSchemaError";
  }
}

type Schema = Record<string, unknown>;

const isObject = (v: unknown): v is Schema => typeof v === "object" && v !== null && !Array.isArray(v);
const pointer = (path: string, key: string) => `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`;

/** The JSON type of a parsed JSON value ("integer" for whole numbers, which are also "number"). */
export function jsonTypeOf(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v as "string" | "boolean" | "object";
}

export function typeAccepts(type: JsonType, v: unknown): boolean {
  const actual = jsonTypeOf(v);
  return actual === type || (type === "number" && actual === "integer");
}

/** The `type` keyword as a list (empty when absent). */
export function typeList(schema: Schema): JsonType[] {
  const t = schema.type;
  return t === undefined ? [] : ((Array.isArray(t) ? t : [t]) as JsonType[]);
}

/** Resolves a local reference: "#" (the root), "#/$defs/name" or "#/definitions/name". */
export function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (ref === "#") return root;
  const m = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (!m) return undefined;
  const defs = root[m[1]!];
  const name = m[2]!.replace(/~1/g, "/").replace(/~0/g, "~");
  return isObject(defs) && isObject(defs[name]) ? (defs[name] as Schema) : undefined;
}

/** Throws UnsupportedSchemaError unless `schema` lies wholly inside the supported subset. */
export function checkSchemaSubset(schema: unknown): void {
  if (!isObject(schema)) throw new UnsupportedSchemaError("type", "", "the schema must be a JSON object");
  new SubsetChecker(schema).check(schema, "");
}

class SubsetChecker {
  constructor(private readonly root: Schema) {}

  check(s: unknown, path: string): void {
    if (!isObject(s)) throw new UnsupportedSchemaError(path.split("/").pop() || "type", path, "a subschema must be a JSON object (boolean schemas are not supported)");
    for (const key of Object.keys(s)) {
      if (!ASSERTIONS.has(key) && !ANNOTATIONS.has(key)) throw new UnsupportedSchemaError(key, pointer(path, key), "only type, properties, required, additionalProperties: false, items, enum, const, anyOf, $defs and $ref are enforced");
    }
    for (const defsKey of ["$defs", "definitions"]) {
      if (s[defsKey] === undefined) continue;
      if (path !== "") throw new UnsupportedSchemaError(defsKey, pointer(path, defsKey), "definitions are only read at the root of the schema");
      const defs = s[defsKey];
      if (!isObject(defs)) throw new UnsupportedSchemaError(defsKey, pointer(path, defsKey), "must be an object of schemas");
      for (const [name, def] of Object.entries(defs)) this.check(def, pointer(pointer(path, defsKey), name));
    }
    const own = Object.keys(s).filter((k) => ASSERTIONS.has(k) && k !== "$defs" && k !== "definitions");
    if (s.$ref !== undefined) return this.checkRef(s, own, path);
    if (s.anyOf !== undefined) return this.checkAnyOf(s, own, path);
    const types = this.checkType(s, path);
    if (s.enum !== undefined || s.const !== undefined) return this.checkValues(s, types, path);
    if (types.length === 0) throw new UnsupportedSchemaError("type", pointer(path, "type"), "a schema must give its type (or use enum, const, anyOf or $ref)");
    if (types.includes("object")) this.checkObject(s, path);
    else for (const k of ["properties", "required", "additionalProperties"]) if (s[k] !== undefined) throw new UnsupportedSchemaError(k, pointer(path, k), `applies only to type "object"`);
    if (types.includes("array")) {
      if (!isObject(s.items)) throw new UnsupportedSchemaError("items", pointer(path, "items"), "an array must give one schema for its items");
      this.check(s.items, pointer(path, "items"));
    } else if (s.items !== undefined) throw new UnsupportedSchemaError("items", pointer(path, "items"), `applies only to type "array"`);
  }

  private checkType(s: Schema, path: string): JsonType[] {
    if (s.type === undefined) return [];
    const list = Array.isArray(s.type) ? s.type : [s.type];
    const at = pointer(path, "type");
    if (list.length === 0 || list.some((t) => typeof t !== "string" || !TYPES.has(t))) throw new UnsupportedSchemaError("type", at, `must be one of ${[...TYPES].join(", ")}, or a non-empty array of them`);
    if (new Set(list).size !== list.length) throw new UnsupportedSchemaError("type", at, "lists a type twice");
    return list as JsonType[];
  }

  private checkRef(s: Schema, own: string[], path: string): void {
    const at = pointer(path, "$ref");
    if (own.length > 1) throw new UnsupportedSchemaError("$ref", at, `cannot be combined with ${own.filter((k) => k !== "$ref").join(", ")}`);
    // A chain of references that only leads back to itself describes no value at all.
    const seen = new Set<unknown>();
    let target: unknown = s;
    while (isObject(target) && typeof target.$ref === "string") {
      if (seen.has(target)) throw new UnsupportedSchemaError("$ref", at, "the reference only leads back to itself");
      seen.add(target);
      const next = resolveRef(this.root, target.$ref);
      if (!next) throw new UnsupportedSchemaError("$ref", at, `"${String(target.$ref)}" does not resolve (use "#", "#/$defs/<name>" or "#/definitions/<name>")`);
      target = next;
    }
    if (typeof s.$ref !== "string") throw new UnsupportedSchemaError("$ref", at, "must be a string");
  }

  private checkAnyOf(s: Schema, own: string[], path: string): void {
    const at = pointer(path, "anyOf");
    if (own.length > 1) throw new UnsupportedSchemaError("anyOf", at, `cannot be combined with ${own.filter((k) => k !== "anyOf").join(", ")}`);
    if (!Array.isArray(s.anyOf) || s.anyOf.length === 0) throw new UnsupportedSchemaError("anyOf", at, "must be a non-empty array of schemas");
    s.anyOf.forEach((sub, i) => this.check(sub, pointer(at, String(i))));
  }

  private checkValues(s: Schema, types: JsonType[], path: string): void {
    const keyword = s.enum !== undefined ? "enum" : "const";
    const at = pointer(path, keyword);
    if (s.enum !== undefined && s.const !== undefined) throw new UnsupportedSchemaError("const", pointer(path, "const"), "cannot be combined with enum");
    const extra = Object.keys(s).filter((k) => ASSERTIONS.has(k) && !["enum", "const", "type", "$defs", "definitions"].includes(k));
    if (extra.length) throw new UnsupportedSchemaError(extra[0]!, pointer(path, extra[0]!), `cannot be combined with ${keyword}`);
    const values = keyword === "enum" ? s.enum : [s.const];
    if (!Array.isArray(values) || values.length === 0) throw new UnsupportedSchemaError("enum", at, "must be a non-empty array");
    // Only the values are compiled into the grammar, so each must also satisfy the declared type.
    for (const v of values) {
      if (types.length && !types.some((t) => typeAccepts(t, v))) throw new UnsupportedSchemaError(keyword, at, `${JSON.stringify(v)} is not of type ${types.join(" or ")}`);
    }
  }

  private checkObject(s: Schema, path: string): void {
    if (s.additionalProperties !== undefined && s.additionalProperties !== false) {
      throw new UnsupportedSchemaError("additionalProperties", pointer(path, "additionalProperties"), "only false is supported (objects have exactly the listed properties)");
    }
    const props = s.properties ?? {};
    if (!isObject(props)) throw new UnsupportedSchemaError("properties", pointer(path, "properties"), "must be an object of schemas");
    for (const [name, sub] of Object.entries(props)) {
      // xgrammar writes property names into its grammar unescaped: a quote, backslash or control character breaks it.
      if (/["\\\u0000-\u001f]/.test(name)) throw new UnsupportedSchemaError("properties", pointer(pointer(path, "properties"), name), "property names cannot contain quotes, backslashes or control characters");
      this.check(sub, pointer(pointer(path, "properties"), name));
    }
    if (s.required === undefined) return;
    const at = pointer(path, "required");
    if (!Array.isArray(s.required) || s.required.some((r) => typeof r !== "string")) throw new UnsupportedSchemaError("required", at, "must be an array of property names");
    const missing = s.required.find((r) => !Object.hasOwn(props, r as string));
    if (missing !== undefined) throw new UnsupportedSchemaError("required", at, `"${missing}" is not among the properties, and no other property is allowed`);
  }
}
