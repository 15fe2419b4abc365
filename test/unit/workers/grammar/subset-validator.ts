// A plain JSON Schema validator for exactly the supported subset, written apart from the constraint so the
// property test checks generated values against the schema's meaning, not against the grammar's own view.
import { jsonTypeOf, resolveRef, typeAccepts, typeList, type JsonType } from "../../../../src/protocol/schema-subset.ts";

type Schema = Record<string, unknown>;

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as Schema)[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/** Where `value` breaks `schema` (a JSON Pointer and reason), or null when it is an instance. */
export function schemaViolation(root: Schema, value: unknown, schema: Schema = root, at = ""): string | null {
  if (typeof schema.$ref === "string") return schemaViolation(root, value, resolveRef(root, schema.$ref)!, at);
  if (Array.isArray(schema.anyOf)) {
    const ok = schema.anyOf.some((s) => schemaViolation(root, value, s as Schema, at) === null);
    return ok ? null : `${at}: matches no anyOf branch`;
  }
  const types = typeList(schema);
  if (types.length && !types.some((t) => typeAccepts(t as JsonType, value))) return `${at}: ${jsonTypeOf(value)} is not ${types.join("|")}`;
  const values = Array.isArray(schema.enum) ? schema.enum : "const" in schema ? [schema.const] : null;
  if (values && !values.some((v) => canonical(v) === canonical(value))) return `${at}: ${canonical(value)} is not an allowed value`;
  if (jsonTypeOf(value) === "object" && types.includes("object")) {
    const obj = value as Schema;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const r of (schema.required ?? []) as string[]) if (!Object.hasOwn(obj, r)) return `${at}: missing ${r}`;
    for (const [k, v] of Object.entries(obj)) {
      if (!Object.hasOwn(props, k)) return `${at}: unexpected property ${k}`;
      const bad = schemaViolation(root, v, props[k]!, `${at}/${k}`);
      if (bad) return bad;
    }
  }
  if (Array.isArray(value) && types.includes("array")) {
    for (let i = 0; i < value.length; i++) {
      const bad = schemaViolation(root, value[i], schema.items as Schema, `${at}/${i}`);
      if (bad) return bad;
    }
  }
  return null;
}
