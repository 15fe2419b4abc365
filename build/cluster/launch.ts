// A local kiln cluster on loopback: Postgres, Redis, an S3 server, N kiln replicas sharing them, and haproxy in front.
import { type Subprocess } from "bun";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SECRET_FILE } from "../../src/crypto/server-secret.ts";
import { findBinary, SERVERS } from "../setup-cluster.mjs";
import { startPostgres, type TestPostgres } from "../../test/helpers/postgres-server.ts";
import { startRedis, type TestRedis } from "../../test/helpers/redis-server.ts";
import { startS3Server, type TestS3Server } from "../../test/helpers/s3-server.ts";
import { freePort } from "../../test/build/binary-process.ts";
import { tempDir } from "../../test/helpers/kiln.ts";
import { waitFor } from "../../test/helpers/wait-for.ts";
import { type ServerProcess, startServerProcess } from "../../test/load/server-process.ts";
import { DRAIN_NOTICE_MS, haproxyConfig } from "./haproxy-config.ts";

export interface ClusterOptions {
  replicas: number;
  /** haproxy's port on 127.0.0.1 (0: a free one). */
  port: number;
  /** Where the replicas find their models (the README's Quick start fills the default one). */
  modelsDir: string;
  /** More environment for every replica. */
  env?: Record<string, string>;
  logLevel?: string;
}

export interface Cluster {
  /** haproxy's address: where clients go. */
  url: string;
  /** The first API key (the first replica made it; every replica knows it, from the shared database). */
  key: string;
  /** The replicas' Postgres database. */
  databaseUrl: string;
  replicas: ServerProcess[];
  postgres: TestPostgres;
  redis: TestRedis;
  s3: TestS3Server;
  /** SIGTERM to every replica (their exit codes), then haproxy and the shared servers are stopped. */
  stop(): Promise<number[]>;
}

/** Starts the shared servers, the first replica (it migrates the database and makes the first key), the others, then haproxy. */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const dir = tempDir("kiln-cluster-");
  const started: { stop(): Promise<unknown> }[] = [];
  try {
    const [postgres, redis, s3] = await Promise.all([startPostgres(), startRedis(), startS3Server({ bucket: "kiln-files" })]);
    started.push(postgres, redis, s3);
    const databaseUrl = await postgres.newDatabase();
    // haproxy reaches the replicas from 127.0.0.1: they read the client from its X-Forwarded-For, and drain only once
    // its health checks have taken them out.
    const behindHaproxy = { KILN_TRUSTED_PROXIES: "127.0.0.1", KILN_DRAIN_NOTICE_MS: String(DRAIN_NOTICE_MS) };
    const shared = { KILN_DATABASE_URL: databaseUrl, KILN_REDIS_URL: redis.url, ...s3.env, ...behindHaproxy, ...o.env };
    const replica = (i: number, key?: string) =>
      startServerProcess({ dataDir: join(dir, `replica-${i}`), modelsDir: o.modelsDir, env: shared, ...(key ? { key } : {}), logLevel: o.logLevel ?? "warn" });
    const first = await replica(1);
    started.push(first);
    // One server secret for all: reasoning one replica sealed must open on the others.
    for (let i = 2; i <= o.replicas; i++) {
      mkdirSync(join(dir, `replica-${i}`), { recursive: true });
      copyFileSync(join(dir, "replica-1", SECRET_FILE), join(dir, `replica-${i}`, SECRET_FILE));
    }
    const rest = await Promise.all(Array.from({ length: o.replicas - 1 }, (_, i) => replica(i + 2, first.key)));
    started.push(...rest);
    const replicas = [first, ...rest];
    const haproxy = await startHaproxy(dir, o.port, replicas);
    started.push(haproxy);
    return {
      url: haproxy.url,
      key: first.key,
      databaseUrl,
      replicas,
      postgres,
      redis,
      s3,
      async stop() {
        const codes = await Promise.all(replicas.map((r) => r.stop()));
        await haproxy.stop();
        await Promise.all([postgres.stop(), redis.stop(), s3.stop()]);
        return codes;
      },
    };
  } catch (e) {
    for (const s of started.reverse()) await s.stop().catch(() => {});
    throw e;
  }
}

export interface Haproxy {
  url: string;
  stop(): Promise<void>;
}

/** haproxy in the foreground over the replicas (by their URLs), once it answers /v1/status through its frontend. */
export async function startHaproxy(dir: string, port: number, replicas: readonly { url: string }[]): Promise<Haproxy> {
  const binary = findBinary(SERVERS.find((s: { binary: string }) => s.binary === "haproxy")!);
  if (!binary) throw new Error("haproxy is not installed: run node build/setup.mjs --cluster");
  const bindPort = port || freePort();
  const cfg = join(dir, "haproxy.cfg");
  mkdirSync(dir, { recursive: true });
  const servers = replicas.map((r, i) => {
    const u = new URL(r.url);
    return { name: `kiln${i + 1}`, host: u.hostname, port: Number(u.port) };
  });
  writeFileSync(cfg, haproxyConfig({ bind: { host: "127.0.0.1", port: bindPort }, replicas: servers }));
  const proc: Subprocess = Bun.spawn([binary, "-db", "-f", cfg], { stdout: "ignore", stderr: "pipe" });
  const url = `http://127.0.0.1:${bindPort}`;
  const up = async () => {
    try {
      return (await fetch(`${url}/v1/status`)).status === 200;
    } catch {
      return false;
    }
  };
  await waitFor(async () => proc.exitCode !== null || (await up()), { what: "haproxy to answer /v1/status", timeoutMs: 20_000 });
  if (proc.exitCode !== null) throw new Error(`haproxy exited with ${proc.exitCode}: ${await new Response(proc.stderr as ReadableStream).text()}`);
  return {
    url,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
