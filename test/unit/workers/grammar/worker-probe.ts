// Worker side of the "inside a Bun worker" test: a one-letter vocabulary, a boolean schema, one mask.
import { ConstraintCompiler } from "../../../../workers/text/grammar/constraint-compiler.ts";
import { grammarVocab } from "../../../../workers/text/grammar/grammar-vocab.ts";
import { allowedIds, maskWords } from "../../../../workers/text/grammar/token-mask.ts";

declare const self: Worker;

const letters = ["t", "r", "u", "e", "f", "a", "l", "s", "x", "<eos>"];
const vocab = grammarVocab({ size: letters.length, stopIds: [letters.length - 1], tokenBytes: (id) => new TextEncoder().encode(letters[id]!) });
const compiler = await ConstraintCompiler.create(vocab);
const m = await (await compiler.compile({ kind: "json_schema", schema: { type: "boolean" } })).matcher();
const mask = new Uint32Array(maskWords(vocab.size));
await m.fillMask(mask);
const allowed = allowedIds(mask, vocab.size).map((id) => letters[id]!);
for (const ch of "true") m.accept(letters.indexOf(ch));
self.postMessage({ allowed, complete: m.isComplete() });
