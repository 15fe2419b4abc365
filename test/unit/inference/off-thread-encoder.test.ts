// The tokenizer worker's client with scripted workers: answers matched by id, a worker that never answers is bounded
// and replaced, the requests queued behind it still get their answers.
import { describe, expect, test } from "bun:test";
import { EncodeTimeout, encodeBudgetMs, OffThreadEncoder } from "../../../src/inference/off-thread-encoder.ts";
import type { EncodeReply, EncodeRequest } from "../../../src/inference/tokenizer-protocol.ts";

/** A stand-in tokenizer worker: answers in order with one id per character; once it `hangs` on a text it answers nothing more. */
class ScriptedWorker {
  readonly posted: EncodeRequest[] = [];
  onmessage: ((ev: MessageEvent<EncodeReply>) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  terminated = false;
  private stuck = false;
  constructor(private readonly hangs: (text: string) => boolean) {}
  unref(): void {}
  postMessage(msg: EncodeRequest): void {
    this.posted.push(msg);
    this.stuck ||= this.hangs(msg.text);
    if (this.stuck) return;
    const ids = Int32Array.from(msg.text, (c) => c.charCodeAt(0));
    queueMicrotask(() => this.onmessage?.({ data: { id: msg.id, ids } } as MessageEvent<EncodeReply>));
  }
  terminate(): void {
    this.terminated = true;
  }
}

function encoder(hangs: (text: string) => boolean, budgetMs = 40) {
  const workers: ScriptedWorker[] = [];
  const enc = new OffThreadEncoder("fake:tokenizer", {
    budgetMs: () => budgetMs,
    spawn: () => {
      const w = new ScriptedWorker(hangs);
      workers.push(w);
      return w;
    },
  });
  return { enc, workers };
}

describe("OffThreadEncoder", () => {
  test("answers come back by id from one worker", async () => {
    const { enc, workers } = encoder(() => false);
    expect(await Promise.all([enc.encode("/m", "ab"), enc.encode("/m", "c")])).toEqual([[97, 98], [99]]);
    expect(workers).toHaveLength(1);
    enc.close();
  });

  test("a worker that never answers fails that text with EncodeTimeout, is terminated, and the texts behind it go to a fresh worker", async () => {
    const { enc, workers } = encoder((text) => text === "stuck" && workers.length === 1);
    const t0 = performance.now();
    const stuck = enc.encode("/m", "stuck").catch((e: unknown) => e);
    const behind = enc.encode("/m", "next");
    const err = await stuck;
    expect(err).toBeInstanceOf(EncodeTimeout);
    expect((err as Error).message).toBe("the tokenizer worker gave no answer within 40 ms for a text of 5 UTF-16 units");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
    expect(workers[0]!.terminated).toBe(true);
    // The text queued behind the stuck one was sent again to the replacement, and answered there.
    expect(await behind).toEqual([110, 101, 120, 116]);
    expect(workers).toHaveLength(2);
    expect(workers[1]!.posted.map((m) => m.text)).toEqual(["next"]);
    // The replacement serves what comes next; nothing from before is still waiting on it.
    expect(await enc.encode("/m", "ok")).toEqual([111, 107]);
    expect(workers).toHaveLength(2);
    enc.close();
  });

  test("the bound restarts for each text as it reaches the front, so a queue of slow-but-alive texts is not cut", async () => {
    // Each text is answered after 30 ms of a 40 ms budget: three in a row take 90 ms, and none times out.
    const workers: { onmessage: ((ev: MessageEvent<EncodeReply>) => void) | null }[] = [];
    const enc = new OffThreadEncoder("fake:tokenizer", {
      budgetMs: () => 40,
      spawn: () => {
        const queue: EncodeRequest[] = [];
        const w = {
          onmessage: null as ((ev: MessageEvent<EncodeReply>) => void) | null,
          onerror: null,
          unref() {},
          terminate() {},
          postMessage(msg: EncodeRequest) {
            queue.push(msg);
            if (queue.length === 1) serve();
          },
        };
        const serve = () =>
          setTimeout(() => {
            const msg = queue.shift()!;
            w.onmessage?.({ data: { id: msg.id, ids: Int32Array.of(msg.text.length) } } as MessageEvent<EncodeReply>);
            if (queue.length) serve();
          }, 30);
        workers.push(w);
        return w;
      },
    });
    expect(await Promise.all([enc.encode("/m", "a"), enc.encode("/m", "bb"), enc.encode("/m", "ccc")])).toEqual([[1], [2], [3]]);
    expect(workers).toHaveLength(1);
    enc.close();
  });

  test("the bound grows with the text: 10 s to load a tokenizer, then 1 s per 16k UTF-16 units", () => {
    expect(encodeBudgetMs(0)).toBe(10_000);
    expect(encodeBudgetMs(16_000)).toBe(11_000);
    expect(encodeBudgetMs(1_000_001)).toBe(72_501);
  });
});
