// One schema per supported keyword, each with texts the constraint must accept whole and a text it must refuse
// at a known byte (`bad` starts where the first refused byte is) or must leave incomplete.
import type { ConstraintSpec } from "../../../../workers/text/grammar/constraint-compiler.ts";

export interface KeywordCase {
  keyword: string;
  spec: ConstraintSpec;
  valid: string[];
  /** `prefix` is accepted; the token holding the first byte of `bad` is refused. */
  invalid?: { prefix: string; bad: string };
  /** A text accepted token by token that is still not a complete value (no stop allowed). */
  incomplete?: string;
}

const schema = (s: Record<string, unknown>): ConstraintSpec => ({ kind: "json_schema", schema: s });
const obj = (properties: Record<string, unknown>, required = Object.keys(properties)) => ({ type: "object", properties, required, additionalProperties: false });

export const KEYWORD_CASES: KeywordCase[] = [
  {
    keyword: "properties + required",
    spec: schema(obj({ name: { type: "string" }, age: { type: "integer" } })),
    valid: ['{"name": "Ann", "age": 31}', '{"name":"","age":0}'],
    invalid: { prefix: '{"name":"Ann"', bad: "}" },
  },
  {
    keyword: "additionalProperties: false",
    spec: schema(obj({ a: { type: "integer" } })),
    valid: ['{"a":1}'],
    invalid: { prefix: '{"a":1', bad: ',"x":2}' },
  },
  {
    keyword: "optional property",
    spec: schema(obj({ a: { type: "integer" }, b: { type: "boolean" } }, ["a"])),
    valid: ['{"a":1}', '{"a": 1, "b": true}'],
    invalid: { prefix: '{"', bad: 'b":true}' },
  },
  {
    keyword: "object without properties",
    spec: schema({ type: "object", properties: {}, additionalProperties: false }),
    valid: ["{}"],
    invalid: { prefix: "{", bad: '"a":1}' },
  },
  {
    keyword: "items",
    spec: schema({ type: "array", items: { type: "integer" } }),
    valid: ["[1, 2, 3]", "[]", "[-7]"],
    invalid: { prefix: "[1,", bad: '"a"]' },
  },
  {
    keyword: "string",
    spec: schema({ type: "string" }),
    valid: ['"hello \\"x\\" \\\\ \\u00e9 \\n"', '"é, 日本, 🙂"', '""'],
    invalid: { prefix: '"line', bad: '\nbreak"' },
  },
  {
    keyword: "string escape",
    spec: schema({ type: "string" }),
    valid: ['"\\t\\/\\b"'],
    invalid: { prefix: '"a\\', bad: 'q"' },
  },
  {
    keyword: "number",
    spec: schema({ type: "number" }),
    valid: ["-12.5e+3", "0", "0.25", "7E2"],
    invalid: { prefix: "0", bad: "1" },
  },
  {
    keyword: "integer",
    spec: schema({ type: "integer" }),
    valid: ["-42", "0", "1234567"],
    invalid: { prefix: "4", bad: ".5" },
  },
  {
    keyword: "boolean",
    spec: schema({ type: "boolean" }),
    valid: ["true", "false"],
    invalid: { prefix: "fals", bad: "y" },
  },
  {
    keyword: "null",
    spec: schema({ type: "null" }),
    valid: ["null"],
    invalid: { prefix: "n", bad: "il" },
  },
  {
    keyword: "enum",
    spec: schema({ enum: ["red", "green", 3, null, "日本"] }),
    valid: ['"green"', "3", "null", '"日本"'],
    invalid: { prefix: '"gre', bad: 'y"' },
  },
  {
    keyword: "type + enum",
    spec: schema({ type: "string", enum: ["a", "b"] }),
    valid: ['"b"'],
    invalid: { prefix: '"', bad: 'c"' },
  },
  {
    keyword: "const",
    spec: schema({ const: { k: [1, "v"] } }),
    // xgrammar writes a const (and an enum value) in compact form: the model must match it exactly.
    valid: ['{"k":[1,"v"]}'],
    invalid: { prefix: '{"k":[1,"', bad: 'w"]}' },
  },
  {
    keyword: "anyOf",
    spec: schema({ anyOf: [{ type: "integer" }, obj({ x: { type: "string" } })] }),
    valid: ['{"x":"y"}', "7"],
    invalid: { prefix: "", bad: '"s"' },
  },
  {
    keyword: "$defs + $ref",
    spec: schema({ $defs: { pt: obj({ x: { type: "number" }, y: { type: "number" } }) }, ...obj({ a: { $ref: "#/$defs/pt" } }) }),
    valid: ['{"a":{"x":1,"y":2.5}}'],
    invalid: { prefix: '{"a":{"x":1,"y":', bad: '"2"}}' },
  },
  {
    keyword: "$ref recursion",
    spec: schema(obj({ v: { type: "integer" }, kids: { type: "array", items: { $ref: "#" } } })),
    valid: ['{"v":1,"kids":[{"v":2,"kids":[]},{"v":3,"kids":[{"v":4,"kids":[]}]}]}'],
    invalid: { prefix: '{"v":1,"kids":[{"v":2', bad: "}]}" },
    incomplete: '{"v":1,"kids":[{"v":2,"kids":[]}]',
  },
  {
    keyword: "nullable type array",
    spec: schema({ type: ["string", "null"] }),
    valid: ["null", '"x"'],
    invalid: { prefix: "", bad: "1" },
  },
  {
    keyword: "nullable object",
    spec: schema({ type: ["object", "null"], properties: { a: { type: "boolean" } }, required: ["a"], additionalProperties: false }),
    valid: ["null", '{"a":false}'],
    invalid: { prefix: "", bad: "[]" },
  },
  {
    keyword: "json_object",
    spec: { kind: "json_object" },
    valid: ['{"a": [1, {"b": null}], "c": "d", "e": -0.5e-3, "f": true}', "{}", '{"é":"日本"}'],
    invalid: { prefix: "", bad: "[1]" },
    incomplete: '{"a": [1',
  },
  {
    keyword: "whitespace bound",
    spec: schema(obj({ a: { type: "integer" } })),
    valid: ['{ "a" : 1 }'],
    invalid: { prefix: '{"a": ', bad: " 1}" },
  },
];
