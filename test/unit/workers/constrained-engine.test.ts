// The engine with constrained rows, on the fake model and a small real grammar vocabulary: constrained rows write
// valid JSON and then the worker's close, unconstrained rows in the same batch are untouched, the constraint
// waits for the thinking block to close, a cut is "length", failures stay in their row, matchers are freed.
import { describe, expect, test } from "bun:test";
import type { OutputConstraint, SamplingParams, SeqDelta, SeqFinish } from "../../../src/protocol/text.ts";
import { Engine } from "../../../workers/text/engine.ts";
import { ConstraintCompiler } from "../../../workers/text/grammar/constraint-compiler.ts";
import type { ConstraintMatcher } from "../../../workers/text/grammar/constraint-matcher.ts";
import { grammarVocab } from "../../../workers/text/grammar/grammar-vocab.ts";
import { type ConstraintSource, RowConstraint } from "../../../workers/text/row-constraint.ts";
import { greedyParams } from "../../helpers/sampling.ts";
import { waitFor } from "../../helpers/wait-for.ts";
import { FakeRunner, referenceGreedy, VOCAB } from "./fake-runner.ts";
import { schemaViolation } from "./grammar/subset-validator.ts";

// A 64-token vocabulary: JSON characters, every letter the schema needs (as real vocabularies have every byte) and
// a few words, markers the grammar never allows, and an end id.
const PIECES = [..."0123456789{}[]:,\" abtrueflsnxyz-.okmdw", '{"', '":', "true", "false", "ok", "mode", '"ok"', '"mode"', "fast", "slow", "\n"];
const THINK_CLOSE = 60;
const TOOL_CLOSE = 61;
const EOS = 63;
const text = (id: number) => (id === THINK_CLOSE ? "</think>" : id === TOOL_CLOSE ? "</tool_call>" : id === EOS ? "" : (PIECES[id] ?? `<${id}>`));
const idOf = (piece: string) => PIECES.indexOf(piece);
const enc = new TextEncoder();
const tokenBytes = (id: number) => enc.encode(text(id));
const vocab = grammarVocab({ size: VOCAB, stopIds: [EOS], tokenBytes: (id) => (id < PIECES.length ? enc.encode(PIECES[id]!) : null) });
const compiler = await ConstraintCompiler.create(vocab);

/** The compiler as the worker's source, counting matchers made and freed. */
function source(fail = false) {
  const live = new Set<ConstraintMatcher>();
  const s: ConstraintSource & { live: Set<ConstraintMatcher>; made: number } = {
    vocabSize: VOCAB,
    live,
    made: 0,
    async matcher(spec, opts) {
      if (fail) throw new Error("no grammar today");
      const m = await compiler.matcher(spec, opts);
      s.made++;
      live.add(m);
      const dispose = m.dispose.bind(m);
      m.dispose = () => {
        live.delete(m);
        dispose();
      };
      return m;
    },
  };
  return s;
}

const SCHEMA = { type: "object", properties: { ok: { type: "boolean" }, mode: { enum: ["fast", "slow"] } }, required: ["ok", "mode"], additionalProperties: false };
const constraint = (extra: Partial<OutputConstraint> = {}): OutputConstraint => ({ spec: { kind: "json_schema", schema: SCHEMA }, stopIds: [EOS], ...extra });
const sampled = (maxTokens: number, extra: Partial<SamplingParams>): SamplingParams => greedyParams(maxTokens, { temperature: 1, stopTokenIds: [EOS], ...extra });

function harness(src: ConstraintSource | undefined = source()) {
  const reports: { deltas: SeqDelta[]; finished: SeqFinish[] }[] = [];
  const engine = new Engine(new FakeRunner(), { maxBatch: 8, tokenBytes, constraints: src, emit: (deltas, finished) => reports.push({ deltas, finished }) });
  const out = (id: string) => reports.flatMap((r) => r.deltas.filter((d) => d.seqId === id).map((d) => d.text)).join("");
  const finish = (id: string) => reports.flatMap((r) => r.finished).find((f) => f.seqId === id);
  const drain = async () => {
    for (let i = 0; i < 2000 && engine.hasWork(); i++) await engine.step();
  };
  return { engine, out, finish, drain };
}

describe("constrained rows in the engine", () => {
  test("every seed writes a valid instance and ends; an unconstrained row in the batch is untouched", async () => {
    const src = source();
    const h = harness(src);
    for (let seed = 1; seed <= 12; seed++) h.engine.add(`c${seed}`, [5, 6, 7], sampled(200, { seed, constraint: constraint() }));
    h.engine.add("plain", [1, 2, 3], greedyParams(20));
    await h.drain();
    for (let seed = 1; seed <= 12; seed++) {
      expect(h.finish(`c${seed}`)).toMatchObject({ reason: "stop" });
      expect(schemaViolation(SCHEMA, JSON.parse(h.out(`c${seed}`)))).toBeNull();
    }
    expect(h.out("plain")).toBe(referenceGreedy([1, 2, 3], 20).map(text).join(""));
    expect(src.made).toBe(12);
    expect(src.live.size).toBe(0);
  });

  test("the close is written by the worker in place of the end id, then the row ends at its own end id", async () => {
    const h = harness();
    h.engine.add("call", [9], sampled(200, { seed: 3, constraint: constraint({ closeIds: [idOf("}"), idOf("\n"), TOOL_CLOSE, EOS] }) }));
    await h.drain();
    const written = h.out("call");
    expect(written.endsWith("}\n</tool_call>")).toBe(true);
    expect(schemaViolation(SCHEMA, JSON.parse(written.slice(0, -"}\n</tool_call>".length)))).toBeNull();
    expect(h.finish("call")!.reason).toBe("stop");
  });

  test("after thinking: free text until the close marker, its framing forced, then JSON (budget-forced close too)", async () => {
    const startAfter = { tokenId: THINK_CLOSE, framingIds: [idOf("\n"), idOf("\n")] };
    const h = harness();
    // The budget runs out after 4 thinking tokens; the worker forces "\n</think>\n\n" and the JSON follows.
    const thinking = { budget: 4, closeTokenId: THINK_CLOSE, forceIds: [idOf("\n"), THINK_CLOSE, idOf("\n"), idOf("\n")] };
    h.engine.add("think", [4, 4], sampled(200, { seed: 5, thinking, constraint: constraint({ startAfter }) }));
    await h.drain();
    const [before, after] = h.out("think").split("\n</think>\n\n");
    expect(before!.length).toBeGreaterThan(0);
    expect(schemaViolation(SCHEMA, JSON.parse(after!))).toBeNull();
    expect(h.finish("think")!.reason).toBe("stop");
  });

  test("a client's stop sequences do not end the thinking before a required answer", async () => {
    const startAfter = { tokenId: THINK_CLOSE, framingIds: [idOf("\n"), idOf("\n")] };
    const h = harness();
    const thinking = { budget: 12, closeTokenId: THINK_CLOSE, forceIds: [idOf("\n"), THINK_CLOSE, idOf("\n"), idOf("\n")] };
    // Every letter stops plain text at once; the thinking runs to its budget all the same, and the JSON follows.
    const stop = [..."abtrueflsnxyzokmdw"];
    h.engine.add("think", [4, 4], sampled(200, { seed: 5, stop, thinking, constraint: constraint({ startAfter }) }));
    await h.drain();
    const [before, after] = h.out("think").split("\n</think>\n\n");
    expect(before!.length).toBeGreaterThan(0);
    expect(schemaViolation(SCHEMA, JSON.parse(after!))).toBeNull();
    expect(h.finish("think")!.reason).toBe("stop");
    expect(h.finish("think")!.stopSequence).toBeUndefined();
  });

  test("a close marker the model writes itself gets the framing forced; forced tokens never reach the grammar", async () => {
    const src = source();
    const row = new RowConstraint(constraint({ startAfter: { tokenId: THINK_CLOSE, framingIds: [idOf("\n"), idOf("\n")] } }), src);
    // The answer is required, so no stop sequence may end the thinking before it.
    expect(row.stopsApply).toBe(false);
    expect(row.accept(idOf("a"), false)).toEqual({ kind: "go" });
    expect(row.accept(THINK_CLOSE, false)).toEqual({ kind: "force", ids: [idOf("\n"), idOf("\n")] });
    expect(row.masking).toBe(true);
    expect(row.accept(idOf("\n"), true)).toEqual({ kind: "go" });
    await row.prepare();
    // A token the grammar refuses (the object must open first) fails the row.
    expect(row.accept(idOf("a"), false)).toMatchObject({ kind: "fail" });
    row.dispose();
    expect(await waitFor(() => src.live.size, { what: "every matcher freed", until: (n) => n === 0 })).toBe(0);
  });

  test("before the block closes, end ids are refused when an answer must follow; a triggered (optional) span leaves them", async () => {
    const logits = () => new Float32Array(VOCAB).fill(1);
    const required = new RowConstraint(constraint({ startAfter: { tokenId: THINK_CLOSE, framingIds: [] } }), source());
    const l = logits();
    required.restrict(l);
    expect(l[EOS]).toBe(-Infinity);
    expect(l[idOf("a")]).toBe(1);
    const optional = new RowConstraint(constraint({ startAfter: { tokenId: THINK_CLOSE, framingIds: [] }, trigger: { tokenId: 62, framingIds: [] } }), source());
    const m = logits();
    optional.restrict(m);
    expect(m[EOS]).toBe(1);
    required.dispose();
    optional.dispose();
  });

  test("a trigger constrains only the spans the model opens: free text, marker, framing, JSON, close, free again", async () => {
    const src = source();
    const OPEN = 62;
    const row = new RowConstraint(constraint({ trigger: { tokenId: OPEN, framingIds: [idOf("\n")] }, closeIds: [idOf("\n"), TOOL_CLOSE] }), src);
    expect(row.stopsApply).toBe(true);
    expect(row.accept(idOf("a"), false)).toEqual({ kind: "go" });
    for (let span = 0; span < 2; span++) {
      expect(row.accept(OPEN, false)).toEqual({ kind: "force", ids: [idOf("\n")] });
      expect(row.accept(idOf("\n"), true)).toEqual({ kind: "go" });
      expect(row.masking).toBe(true);
      await row.prepare();
      for (const piece of ['{"', "ok", '":', "true", ",", '"mode"', ":", '"', "fast", '"', "}"]) expect(row.accept(idOf(piece), false)).toEqual({ kind: "go" });
      expect(row.accept(EOS, false)).toEqual({ kind: "close", ids: [idOf("\n"), TOOL_CLOSE] });
      expect(row.stopsApply).toBe(true);
      expect(row.accept(idOf("b"), false)).toEqual({ kind: "go" });
    }
    row.dispose();
    expect(src.made).toBe(2);
    expect(src.live.size).toBe(0);
  });

  test("a text stop sequence inside the JSON does not cut it; max_tokens inside it ends with length", async () => {
    const h = harness();
    h.engine.add("stops", [3], sampled(200, { seed: 2, stop: ['"'], constraint: constraint() }));
    h.engine.add("cut", [3], sampled(3, { seed: 2, constraint: constraint() }));
    await h.drain();
    expect(schemaViolation(SCHEMA, JSON.parse(h.out("stops")))).toBeNull();
    expect(h.finish("cut")).toMatchObject({ reason: "length", outputTokens: 3 });
  });

  test("ignore_eos: the JSON's end still ends the row (stop, no end-token text)", async () => {
    const h = harness();
    h.engine.add("noeos", [8], sampled(200, { seed: 4, stopTokenIds: [], constraint: constraint() }));
    await h.drain();
    expect(h.finish("noeos")!.reason).toBe("stop");
    expect(schemaViolation(SCHEMA, JSON.parse(h.out("noeos")))).toBeNull();
  });

  test("a matcher that cannot be made fails its row only; cancelled rows free their matchers", async () => {
    const bad = harness(source(true));
    bad.engine.add("c", [1], sampled(50, { constraint: constraint() }));
    bad.engine.add("plain", [1, 2, 3], greedyParams(5));
    await bad.drain();
    expect(bad.finish("c")).toMatchObject({ reason: "error" });
    expect(bad.finish("c")!.message).toContain("no grammar today");
    expect(bad.out("plain")).toBe(referenceGreedy([1, 2, 3], 5).map(text).join(""));

    const src = source();
    const h = harness(src);
    h.engine.add("a", [1], sampled(500, { constraint: constraint({ spec: { kind: "json_object" } }) }));
    await h.engine.step();
    await h.engine.step();
    h.engine.cancel("a");
    await h.drain();
    expect(h.finish("a")!.reason).toBe("cancelled");
    expect(src.made).toBe(1);
    expect(src.live.size).toBe(0);
  });

  test("without a constraint source a constrained add fails with a clear message", async () => {
    const reports: SeqFinish[] = [];
    const engine = new Engine(new FakeRunner(), { maxBatch: 2, tokenBytes, emit: (_d, f) => reports.push(...f) });
    engine.add("c", [1], sampled(5, { constraint: constraint() }));
    await engine.step();
    expect(reports[0]).toMatchObject({ seqId: "c", reason: "error", message: "this model's output cannot be constrained" });
  });
});
