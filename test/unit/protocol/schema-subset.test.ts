// The subset check: what it accepts, and that every refusal names the keyword and where it is.
import { describe, expect, test } from "bun:test";
import { checkSchemaSubset, UnsupportedSchemaError } from "../../../src/protocol/schema-subset.ts";
import { hoistRootRecursion } from "../../../workers/text/grammar/root-recursion.ts";
import { KEYWORD_CASES } from "../workers/grammar/keyword-cases.ts";

function refusal(schema: unknown): { keyword: string; path: string } | null {
  try {
    checkSchemaSubset(schema);
    return null;
  } catch (e) {
    if (!(e instanceof UnsupportedSchemaError)) throw e;
    expect(e.message).toContain(`"${e.keyword}"`);
    return { keyword: e.keyword, path: e.path };
  }
}

const obj = (properties: Record<string, unknown>) => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });

describe("checkSchemaSubset", () => {
  test("accepts every schema the keyword suite runs, with annotations anywhere", () => {
    for (const c of KEYWORD_CASES) if (c.spec.kind === "json_schema") expect(refusal(c.spec.schema)).toBeNull();
    expect(refusal({ title: "T", description: "d", $schema: "https://json-schema.org/draft/2020-12/schema", ...obj({ a: { type: "string", description: "x", default: "y" } }) })).toBeNull();
    expect(refusal({ definitions: { n: { type: "null" } }, $ref: "#/definitions/n" })).toBeNull();
  });

  test.each([
    [{ type: "string", pattern: "^a" }, "pattern", "/pattern"],
    [{ type: "string", format: "date" }, "format", "/format"],
    [{ type: "integer", minimum: 1 }, "minimum", "/minimum"],
    [{ type: "array", items: { type: "string" }, minItems: 1 }, "minItems", "/minItems"],
    [{ oneOf: [{ type: "string" }] }, "oneOf", "/oneOf"],
    [{ allOf: [{ type: "string" }] }, "allOf", "/allOf"],
    [{ not: { type: "string" } }, "not", "/not"],
    [{ type: "object", properties: {}, patternProperties: {} }, "patternProperties", "/patternProperties"],
    [obj({ a: { type: "string", maxLength: 3 } }), "maxLength", "/properties/a/maxLength"],
    [{ type: "object", properties: {}, additionalProperties: true }, "additionalProperties", "/additionalProperties"],
    [{ type: "object", properties: {}, additionalProperties: { type: "string" } }, "additionalProperties", "/additionalProperties"],
    [{ type: "object", properties: { a: { type: "string" } }, required: ["b"] }, "required", "/required"],
    [{ type: "object", properties: { 'a"b': { type: "string" } } }, "properties", '/properties/a"b'],
    [{ type: "array" }, "items", "/items"],
    [{ type: "array", items: [{ type: "string" }] }, "items", "/items"],
    [{ type: "strin" }, "type", "/type"],
    [{ type: [] }, "type", "/type"],
    [{ description: "no type" }, "type", "/type"],
    [{ enum: [] }, "enum", "/enum"],
    [{ type: "string", enum: ["a", 1] }, "enum", "/enum"],
    [{ type: "integer", const: 1.5 }, "const", "/const"],
    [{ anyOf: [] }, "anyOf", "/anyOf"],
    [{ type: "string", anyOf: [{ type: "string" }] }, "anyOf", "/anyOf"],
    [{ $ref: "#/$defs/missing" }, "$ref", "/$ref"],
    [{ $ref: "https://example.com/s.json" }, "$ref", "/$ref"],
    [{ $defs: { a: { $ref: "#/$defs/b" }, b: { $ref: "#/$defs/a" } }, $ref: "#/$defs/a" }, "$ref", "/$defs/a/$ref"],
    [{ $ref: "#/$defs/s", type: "string", $defs: { s: { type: "string" } } }, "$ref", "/$ref"],
    [obj({ a: { $defs: {}, type: "string" } }), "$defs", "/properties/a/$defs"],
    [obj({ a: true }), "a", "/properties/a"],
    [{ type: "string", properties: {} }, "properties", "/properties"],
  ])("refuses %j naming %s", (schema, keyword, path) => {
    expect(refusal(schema)).toEqual({ keyword, path });
  });

  test("refuses a non-object schema", () => {
    expect(refusal("string")?.keyword).toBe("type");
    expect(refusal(null)?.keyword).toBe("type");
  });
});

describe("hoistRootRecursion", () => {
  test("moves the root into $defs and repoints every '#' reference, keeping other references", () => {
    const s = { $defs: { leaf: { type: "null" }, root: { type: "string" } }, ...obj({ kid: { anyOf: [{ $ref: "#" }, { $ref: "#/$defs/leaf" }] } }) };
    const h = hoistRootRecursion(s);
    expect(h.$ref).toBe("#/$defs/root_");
    expect((h.$defs as Record<string, unknown>).root).toEqual({ type: "string" });
    expect(JSON.stringify(h)).not.toContain('"#"');
    expect(JSON.stringify(h)).toContain('"#/$defs/leaf"');
    expect(refusal(h)).toBeNull();
  });

  test("leaves a schema without root references untouched", () => {
    const s = obj({ a: { type: "string" } });
    expect(hoistRootRecursion(s)).toBe(s);
  });
});
