// One local cluster for a whole test file (build/cluster/launch.ts): started before its tests with a handle on its
// Postgres database, stopped after them; and teams with a key made straight in that database.
import { afterAll, beforeAll } from "bun:test";
import { dirname } from "node:path";
import { type Cluster, startCluster } from "../../build/cluster/launch.ts";
import { closeDatabase, type Db, openDatabase } from "../../src/db/client.ts";
import { createKey } from "../../src/db/keys-repo.ts";
import { createTeam, updateTeam } from "../../src/db/teams-repo.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";

export interface ClusterFile {
  readonly cluster: Cluster;
  readonly db: Db;
  /** A new team (with `settings`, e.g. limits) and one key of it. */
  team(name: string, settings?: Parameters<typeof updateTeam>[2]): Promise<{ id: number; key: string; keyId: number }>;
}

/** `replicas` kiln replicas of the tiny model (one ORT thread each) behind haproxy, for the file's tests. */
export function clusterPerFile(replicas: number): ClusterFile {
  let cluster: Cluster | undefined;
  let db: Db | undefined;
  beforeAll(async () => {
    cluster = await startCluster({ replicas, port: 0, modelsDir: dirname(await tinyModelDir()), env: { KILN_THREADS: "1" } });
    db = await openDatabase(tempDir("kiln-cluster-db-"), { url: cluster.databaseUrl });
  }, 300_000);
  afterAll(async () => {
    if (db) await closeDatabase(db);
    await cluster?.stop();
  }, 120_000);
  const started = <T>(x: T | undefined): T => {
    if (x === undefined) throw new Error("the cluster is not started yet (use it inside a test or hook)");
    return x;
  };
  return {
    get cluster() {
      return started(cluster);
    },
    get db() {
      return started(db);
    },
    async team(name, settings = {}) {
      const t = await createTeam(started(db), name);
      await updateTeam(started(db), t.id, settings);
      const k = await createKey(started(db), t.id, "k");
      return { id: t.id, key: k.key, keyId: k.id };
    },
  };
}
