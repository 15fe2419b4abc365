// The tokenizer training corpus, embedded as text imports so a compiled kiln binary can build its default model offline.
import code from "./corpus/code.txt" with { type: "text" };
import data from "./corpus/data.txt" with { type: "text" };
import docs from "./corpus/docs.txt" with { type: "text" };
import prose from "./corpus/prose.txt" with { type: "text" };
import world from "./corpus/world.txt" with { type: "text" };

/** Corpus documents in a fixed order (merge learning is order-independent, but hashing the corpus is not). */
export const CORPUS: readonly string[] = [prose, docs, code, data, world];
