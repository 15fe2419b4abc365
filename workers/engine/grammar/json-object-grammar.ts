// EBNF for "any JSON object" (response_format json_object), written out because xgrammar's own non-strict
// object grammar mixes separators (", " inside, "," where asked) and its built-in JSON grammar also admits
// arrays and scalars at the root.

/** The grammar, with at most `maxWhitespace` whitespace characters wherever JSON allows whitespace. */
export function jsonObjectEbnf(maxWhitespace: number): string {
  if (!(Number.isInteger(maxWhitespace) && maxWhitespace >= 0)) throw new Error("maxWhitespace must be a non-negative integer");
  const ws = maxWhitespace === 0 ? '""' : `[ \\t\\n\\r]{0,${maxWhitespace}}`;
  return [
    "root ::= object",
    'value ::= object | array | string | number | "true" | "false" | "null"',
    'object ::= ("{" ws member (ws "," ws member)* ws "}") | ("{" ws "}")',
    'member ::= string ws ":" ws value',
    'array ::= ("[" ws value (ws "," ws value)* ws "]") | ("[" ws "]")',
    'string ::= "\\"" string_rest',
    // The lookahead (what may follow a closed string) lets xgrammar settle tokens that run past the closing
    // quote when it precomputes masks; without it, every step inside a string re-checks the whole vocabulary
    // (about 150 ms a step on a 151,936-token vocabulary instead of 0.1 ms).
    'string_rest ::= ("\\"" | [^"\\\\\\x00-\\x1f] string_rest | "\\\\" escape string_rest) (= [ \\t\\n\\r]* [,}\\]:])',
    'escape ::= ["\\\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F]',
    'number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+\\-]? [0-9]+)?',
    `ws ::= ${ws}`,
  ].join("\n");
}
