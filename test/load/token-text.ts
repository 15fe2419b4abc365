// Deterministic prompt text of an exact token count for load scenarios, and unique prompts of one fixed length: seeded
// words that are one token each after a space, counted with the model's own tokenizer (passed in as `count`).

/** Token count of a text under the model's tokenizer (e.g. `(t) => tokenizer.encodeText(t).length`). */
export type CountTokens = (text: string) => number;

/** Common English words the texts are drawn from; which of them are single tokens depends on the tokenizer. */
export const WORDS: readonly string[] = (
  "the of and to in is was for on that with as by at from it his an are were this be which or had her not but their " +
  "they have one has all been who more its also new can other first after some into would when two these time there " +
  "most over only may where people between any made many city three during such world state under then used so him " +
  "while years through both before well later being called known part same however since several area each until group " +
  "life use due war found including against number about work around high within system name long national water small " +
  "based year back among four early five public general house down end local million order form place large per power " +
  "great government school along set important family left took land own another different without point main second " +
  "became team line united game states university history south north west east old river light keeper bottle winter " +
  "morning quiet story short message sea ship stone road field garden window door table paper letter book music song " +
  "river hill valley forest tree flower bird horse dog cat fish bread milk salt fire wind rain snow cloud star moon sun " +
  "day night week month hour minute color red blue green white black dark bright warm cold open close begin stop start " +
  "read write speak listen learn teach build break carry bring hold keep give take make find show tell ask answer " +
  "question problem reason result idea plan rule law court market price money trade bank office report page word voice " +
  "face hand head heart eye body mind friend child mother father brother sister king queen lord army soldier battle"
).split(" ");

/** mulberry32 over a string's FNV-1a hash: the same seed gives the same words on every run. */
export function seededRandom(seed: string): () => number {
  let h = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 0x01000193);
  let a = h >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The pool's words that are one token after a space. A byte-level BPE splits text at word boundaries before merging,
 * so each such word appended after a space adds exactly one token: that is what lets a text hit a count exactly.
 */
export function oneTokenWords(count: CountTokens, pool: readonly string[] = WORDS): string[] {
  return [...new Set(pool)].filter((w) => count(` ${w}`) === 1);
}

/**
 * Text of exactly `tokens` tokens: `head` (a nonce, say; counted) then words drawn from `words` by `seed`. Throws when
 * the count cannot be hit (a head longer than the target, or a tokenizer whose words do not add one token each).
 */
export function textOfTokens(tokens: number, o: { count: CountTokens; words: readonly string[]; seed: string; head?: string }): string {
  if (!o.words.length) throw new Error("textOfTokens: no one-token words for this tokenizer");
  const random = seededRandom(o.seed);
  const drawn: string[] = [];
  const text = (k: number) => {
    while (drawn.length < k) drawn.push(o.words[Math.floor(random() * o.words.length)]!);
    return [...(o.head ? [o.head] : []), ...drawn.slice(0, k)].join(" ");
  };
  let k = Math.max(0, tokens - (o.head ? o.count(o.head) : 0));
  for (let tries = 0; tries < 8; tries++) {
    const n = o.count(text(k));
    if (n === tokens) return text(k);
    k += tokens - n;
    if (k < 0) break;
  }
  throw new Error(`textOfTokens: could not make a text of ${tokens} tokens${o.head ? ` after "${o.head}"` : ""}`);
}

/**
 * Prompts of exactly the base's token count that differ from their first token on: the base's opening words (at least
 * three tokens of them) give way to as many one-token words, a different combination each call. A prompt cache
 * (kiln's, llama.cpp's) then has nothing to reuse beyond the template's opening tokens, every request costs what a
 * fresh one costs, and the prompt is as long as the base alone.
 */
export class FreshPrompts {
  private n: number;
  private issued = 0;
  /** The first word's pool (one token with or without a space before it), and how many words replace the opening. */
  private readonly first: string[];
  private readonly slots: number;
  private readonly rest: string;
  private readonly combinations: number;
  readonly length: number;

  constructor(
    base: string,
    private readonly words: readonly string[],
    private readonly count: CountTokens,
    /** Where the combinations start. */
    start = 0,
  ) {
    this.first = words.filter((w) => count(w) === 1);
    if (words.length < 16 || this.first.length < 4) {
      throw new Error(`FreshPrompts: only ${words.length} one-token words (${this.first.length} also without a space) for this tokenizer (16 and 4 needed)`);
    }
    this.length = count(base);
    const baseWords = base.split(" ");
    let k = 1;
    while (k < baseWords.length && count(baseWords.slice(0, k).join(" ")) < 3) k++;
    if (k >= baseWords.length) throw new Error(`FreshPrompts: "${base}" is too short to open with fresh words`);
    this.slots = count(baseWords.slice(0, k).join(" "));
    this.rest = ` ${baseWords.slice(k).join(" ")}`;
    this.combinations = this.first.length * words.length ** (this.slots - 1);
    this.n = start % this.combinations;
  }

  private make(i: number): string {
    let k = i % this.combinations;
    const tag = [this.first[k % this.first.length]!];
    k = Math.floor(k / this.first.length);
    for (let s = 1; s < this.slots; s++, k = Math.floor(k / this.words.length)) tag.push(this.words[k % this.words.length]!);
    return tag.join(" ") + this.rest;
  }

  /** The next prompt; throws if its token count differs from the base's (the tokenizer broke the rule above). */
  next(): string {
    if (this.issued++ >= this.combinations) throw new Error(`FreshPrompts: all ${this.combinations} combinations used`);
    const prompt = this.make(this.n++);
    const n = this.count(prompt);
    if (n !== this.length) throw new Error(`FreshPrompts: "${prompt}" is ${n} tokens, the base ${this.length}`);
    return prompt;
  }
}
