// `npm run bench -- --cluster`: kiln behind haproxy with 1 and 3 replicas sharing Postgres, Redis and S3 (the tiny
// preset), tokens/s at 16 clients through haproxy, and what the shared limiter adds to a request (p50/p99).
import { expect, test } from "bun:test";
import { loadavg } from "node:os";
import { dirname } from "node:path";
import { startCluster } from "../../build/cluster/launch.ts";
import { closeDatabase, openDatabase } from "../../src/db/client.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { loadTokenizer } from "../../src/inference/tokenizer.ts";
import { readModelFolder } from "../../src/models/registry.ts";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { freshChat } from "./fresh-chat.ts";
import { medianBy, percentile } from "./metrics.ts";
import { freshRound, type Target, warmUp } from "./prefix-scenarios.ts";

const CLIENTS = Number(process.env.KILN_BENCH_CLUSTER_CLIENTS ?? 16);
const ROUNDS = Number(process.env.KILN_BENCH_CLUSTER_ROUNDS ?? 3);
const NEW_TOKENS = 64;
const LIMITER_REQUESTS = Number(process.env.KILN_BENCH_CLUSTER_LIMITER_REQUESTS ?? 2000);
const MODEL = "kiln-tiny-v1";

/** Latencies (ms) of `n` GET /v1/models one after another with `key`. */
async function latencies(url: string, key: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`GET /v1/models answered ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out;
}

test(
  "cluster: tokens/s through haproxy with 1 and 3 replicas, and the shared limiter's cost per request",
  async () => {
    const modelDir = await tinyModelDir();
    const fresh = await freshChat(await loadTokenizer(readModelFolder(modelDir, MODEL)));
    const rows: string[] = [];
    let limiter = "";
    for (const replicas of [1, 3]) {
      const cluster = await startCluster({ replicas, port: 0, modelsDir: dirname(modelDir) });
      try {
        const target: Target = { url: cluster.url, key: cluster.key, model: MODEL };
        await warmUp(target, fresh);
        await freshRound(target, fresh, CLIENTS, NEW_TOKENS);
        const rounds = [];
        for (let r = 0; r < ROUNDS; r++) rounds.push(await freshRound(target, fresh, CLIENTS, NEW_TOKENS));
        const med = medianBy(rounds, (x) => x.outputTokPerSec);
        rows.push(`| ${replicas} | ${med.outputTokPerSec.toFixed(1)} | ${med.ttftP50.toFixed(0)} | ${med.ttftP95.toFixed(0)} | ${med.tpotP50.toFixed(1)} | ${loadavg()[0]!.toFixed(1)} |`);
        console.log(`${replicas} replica(s): ${med.outputTokPerSec.toFixed(1)} tok/s at ${CLIENTS} clients`);
        if (replicas === 3) {
          // One replica, straight (no haproxy): a team with limits (each request takes from Redis) against one without.
          const db = await openDatabase(tempDir("kiln-bench-cluster-db-"), { url: cluster.databaseUrl });
          const limited = await createTeam(db, "limited");
          await updateTeam(db, limited.id, { rpmLimit: 1_000_000, tpmLimit: 100_000_000 });
          const unlimited = await createTeam(db, "unlimited");
          const keys = { limited: (await createKey(db, limited.id, "k")).key, unlimited: (await createKey(db, unlimited.id, "k")).key };
          await closeDatabase(db);
          const url = cluster.replicas[0]!.url;
          await latencies(url, keys.limited, 200);
          await latencies(url, keys.unlimited, 200);
          const on: number[] = [];
          const off: number[] = [];
          for (let i = 0; i < 10; i++) {
            on.push(...(await latencies(url, keys.limited, LIMITER_REQUESTS / 10)));
            off.push(...(await latencies(url, keys.unlimited, LIMITER_REQUESTS / 10)));
          }
          const f = (v: number) => `${(v * 1000).toFixed(0)} µs`;
          limiter =
            `shared limiter, GET /v1/models on one replica, ${LIMITER_REQUESTS} requests each, alternating: ` +
            `limited team (Redis take) p50 ${f(percentile(on, 50))}, p99 ${f(percentile(on, 99))}; ` +
            `unlimited team p50 ${f(percentile(off, 50))}, p99 ${f(percentile(off, 99))}; ` +
            `added p50 ${f(percentile(on, 50) - percentile(off, 50))}, p99 ${f(percentile(on, 99) - percentile(off, 99))}`;
        }
      } finally {
        const codes = await cluster.stop();
        expect(codes.every((c) => c === 0)).toBe(true);
      }
    }
    const cpu = readCpuInfo();
    console.log(`\ncpu: ${describeCpu(cpu)}; load average ${loadavg()[0]!.toFixed(1)} on ${cpu.logicalCores} cores`);
    console.log(
      `model ${MODEL} (tiny preset), each replica with kiln's default threads; Postgres, Redis, an S3 server (fauxqs) and haproxy on loopback; ` +
        `${CLIENTS} streaming clients through haproxy, fresh prompts of ${fresh.promptIds.length} tokens, ${NEW_TOKENS} tokens each, median of ${ROUNDS} rounds. ` +
        `The replicas share this machine's ${cpu.logicalCores} cores: the 3-replica row shows the cluster's overhead, not scaling.\n`,
    );
    console.log(["| replicas | output tok/s | TTFT p50 ms | TTFT p95 ms | TPOT p50 ms | load |", "|---|---|---|---|---|---|", ...rows].join("\n"));
    console.log(limiter);
  },
  3_600_000,
);
