// Bounds the JSON numbers a constrained output may write, so every number the grammar allows parses to a finite
// double: xgrammar's JSON rules let digits and exponents run on (`1e10554091376700082132225600` is Infinity in
// JavaScript and Python). The schema's grammar is printed as EBNF, its two number rules replaced, and compiled.

/** Digits before the point (at most), after it (at most), and of the exponent (at most): 9.99…e15 × 10^99 is finite. */
export const NUMBER_BOUNDS = { integer: 16, fraction: 16, exponent: 2 } as const;

const { integer, fraction, exponent } = NUMBER_BOUNDS;
const INT_PART = `("0" | [1-9] [0-9]{0,${integer - 1}})`;

/** xgrammar's number rules as its JSON-schema converter prints them, and their bounded forms. */
export const NUMBER_RULES: readonly [string, string][] = [
  ['basic_integer ::= ("0" | "-"? [1-9] [0-9]*)', `basic_integer ::= ("0" | "-"? [1-9] [0-9]{0,${integer - 1}})`],
  [
    'basic_number ::= "-"? ("0" | [1-9] [0-9]*) ("." [0-9]+)? ([eE] [+-]? [0-9]+)?',
    `basic_number ::= "-"? ${INT_PART} ("." [0-9]{1,${fraction}})? ([eE] [+-]? [0-9]{1,${exponent}})?`,
  ],
];

/**
 * The EBNF with its number rules bounded. Throws when a rule is not printed as expected (another xgrammar): an
 * unbounded grammar must not be used unnoticed.
 */
export function boundNumbers(ebnf: string): string {
  const lines = ebnf.split("\n");
  for (const [from, to] of NUMBER_RULES) {
    const name = from.slice(0, from.indexOf(" ::="));
    const at = lines.findIndex((l) => l.startsWith(`${name} ::=`));
    if (at < 0) continue;
    if (lines[at] !== from) throw new Error(`unexpected ${name} rule in the JSON grammar: ${lines[at]}`);
    lines[at] = to;
  }
  return lines.join("\n");
}
