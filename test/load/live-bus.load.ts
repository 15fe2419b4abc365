// `npm run bench -- --live-bus`: what publishing stored responses' events costs the producing replica in process (no
// KILN_REDIS_URL: today's path) and over the Redis bus (a local redis-server), without a follower and with one on
// another connection: the publish call (p50/p99 µs) and the event loop's time per event, with one event a macrotask
// (one stream) and 16 (16 streams' generation step); then, paced one event a millisecond, the time from publish to
// delivery. Rounds alternate between the modes and the median round is reported (the box is shared). The follower runs
// in this process, so its own handling of each message counts in its mode's loop time (on a replica it would not).
import { expect, test } from "bun:test";
import { loadavg } from "node:os";
import { LiveResponses } from "../../src/live/live.ts";
import type { LiveEvent } from "../../src/live/live-bus.ts";
import { RedisLiveBus } from "../../src/live/redis-bus.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { RedisConnection } from "../../src/redis/connection.ts";
import { redisPerFile } from "../helpers/redis-server.ts";
import { waitFor } from "../helpers/wait-for.ts";
import { markdownTable, medianBy, percentile } from "./metrics.ts";

const EVENTS = Number(process.env.KILN_BENCH_LIVE_EVENTS ?? 4000);
const ROUNDS = Number(process.env.KILN_BENCH_ROUNDS ?? 3);
/** Events timed for delivery, one a millisecond (a generation step is 10–30 ms: these do not queue behind each other). */
const PACED = Math.min(EVENTS, 1000);
const WARMUP = 500;

/** A one-token delta as the recorder publishes it; `sent_at` lets a follower time its delivery. */
function delta(sequence: number): LiveEvent {
  const json = JSON.stringify({ type: "response.output_text.delta", item_id: "msg_0123456789abcdef", output_index: 0, content_index: 0, delta: " word", logprobs: [], sent_at: performance.now(), sequence_number: sequence });
  return { sequence, type: "response.output_text.delta", json };
}
const macrotask = () => new Promise<void>((r) => setImmediate(r));

interface Round {
  call: number[];
  loopUs: number;
}

/** Publishes `events` events over `streams` jobs named `<prefix><i>`, `streams` per macrotask; the first WARMUP are not counted. */
async function publishRound(live: LiveResponses, prefix: string, streams: number, events: number): Promise<Round> {
  const ids = Array.from({ length: streams }, (_, i) => `${prefix}${i}`);
  for (const id of ids) {
    live.begin(id, () => {});
    live.listen(id, () => undefined);
  }
  const call: number[] = [];
  let t0 = 0;
  for (let n = 0; n < WARMUP + events; n += streams) {
    if (!t0 && n >= WARMUP) t0 = performance.now();
    for (const id of ids) {
      const ev = delta(n);
      const a = performance.now();
      live.publish(id, ev);
      if (n >= WARMUP) call.push((performance.now() - a) * 1000);
    }
    await macrotask();
  }
  const loopUs = ((performance.now() - t0) * 1000) / call.length;
  for (const id of ids) live.end(id);
  return { call, loopUs };
}

const shared = redisPerFile();

function bus(): RedisLiveBus {
  const conn = new RedisConnection(shared.redis.url);
  const b = new RedisLiveBus(conn);
  shared.track(b, conn);
  return b;
}

/** A follower on its own connection, subscribed to the bench's jobs; `heard` gets each delivery's µs. */
async function follow(streams: number): Promise<number[]> {
  const heard: number[] = [];
  const f = bus();
  let ready = 0;
  for (let i = 0; i < streams; i++) {
    f.subscribe(`resp_bench_${i}`, {
      event: (ev) => heard.push((performance.now() - (JSON.parse(ev.json) as { sent_at: number }).sent_at) * 1000),
      end: () => undefined,
      ready: () => ready++,
    });
  }
  await waitFor(() => ready, { what: "the follower's subscriptions", until: (n) => n === streams });
  return heard;
}

test("per-event publish cost: in process, and over the Redis bus without and with a follower", async () => {
  console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
  console.log(`${EVENTS} events a round (after ${WARMUP} uncounted), median of ${ROUNDS} alternating rounds; load average ${loadavg()[0]!.toFixed(2)}`);
  await follow(16);
  // Only the followed mode's jobs have the names the follower listens to.
  const modes = [
    { label: "in process (no Redis)", live: new LiveResponses(memoryLogger()), prefix: "resp_solo_" },
    { label: "Redis bus, no follower", live: new LiveResponses(memoryLogger(), bus()), prefix: "resp_solo_" },
    { label: "Redis bus, a follower", live: new LiveResponses(memoryLogger(), bus()), prefix: "resp_bench_" },
  ];
  const rows: string[][] = [];
  const us = (v: number) => v.toFixed(1);
  for (const streams of [1, 16]) {
    const rounds: Round[][] = modes.map(() => []);
    for (let r = 0; r < ROUNDS; r++) for (const [i, m] of modes.entries()) rounds[i]!.push(await publishRound(m.live, m.prefix, streams, EVENTS));
    for (const [i, m] of modes.entries()) {
      const med = medianBy(rounds[i]!, (x) => x.loopUs);
      rows.push([`${m.label}, ${streams} a step`, us(percentile(med.call, 50)), us(percentile(med.call, 99)), us(med.loopUs)]);
    }
  }
  console.log(markdownTable(["events published", "call p50 µs", "call p99 µs", "loop µs/event"], rows));

  const heard = await follow(1);
  const paced = new LiveResponses(memoryLogger(), bus());
  paced.begin("resp_bench_0", () => {});
  for (let n = 0; n < PACED; n++) {
    paced.publish("resp_bench_0", delta(n));
    await Bun.sleep(1);
  }
  await waitFor(() => heard.length, { what: `${PACED} paced events delivered`, until: (n) => n >= PACED });
  console.log(`delivery to a follower on another connection, ${PACED} events one a millisecond: p50 ${us(percentile(heard, 50))} µs, p99 ${us(percentile(heard, 99))} µs`);
  expect(heard.length).toBe(PACED);
}, 600_000);
