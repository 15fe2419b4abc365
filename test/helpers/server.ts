// Starts a real kiln (HTTP on a free port, worker threads, the tiny model) inside the test process.
import { dirname } from "node:path";
import { startKiln, type RunningKiln } from "../../src/cli/serve.ts";
import { loadConfig } from "../../src/config.ts";
import { memoryLogger } from "../../src/log/logger.ts";
import type { FetchPolicy, Net } from "../../src/media/fetch-policy.ts";
import { tempDir } from "./kiln.ts";
import { tinyModelDir } from "./tiny-model.ts";

export interface TestServer extends RunningKiln {
  key: string;
  modelId: string;
  logs: Record<string, unknown>[];
  /** Every worker thread the pool started, in order (for fault injection). */
  workers: Worker[];
}

/**
 * `opts`: the network remote media come over, and fetch-policy changes (tests only); `modelDir`, the one model to
 * serve (the tiny text model when absent); `key`, the key to use when the database already has one (nothing is printed).
 */
export async function startTestServer(
  env: Record<string, string> = {},
  opts: { net?: Net; fetchPolicy?: Partial<FetchPolicy>; modelDir?: string; key?: string } = {},
): Promise<TestServer> {
  const { modelDir: chosen, key: given, ...media } = opts;
  const modelDir = chosen ?? (await tinyModelDir());
  // KILN_DEVICE passes through, so a run of the suite's API tests can be made on the webgpu device.
  const device = process.env.KILN_DEVICE ? { KILN_DEVICE: process.env.KILN_DEVICE } : {};
  const config = loadConfig({ KILN_DATA_DIR: tempDir(), KILN_MODELS_DIR: dirname(modelDir), KILN_PORT: "0", KILN_THREADS: "1", ...device, ...env }, []);
  let printed = "";
  const logger = memoryLogger();
  const workers: Worker[] = [];
  const spawnWorker = (url: string | URL) => {
    const w = new Worker(url);
    workers.push(w);
    return w;
  };
  const kiln = await startKiln(config, { logger, print: (t) => (printed += t), buildDefaultModel: false, spawnWorker, ...media });
  const key = given ?? printed.match(/LLM\|\d+\|[A-Za-z0-9]+/)![0];
  const modelId = kiln.deps.registry.list()[0]!.id;
  return { ...kiln, key, modelId, logs: logger.lines, workers };
}
