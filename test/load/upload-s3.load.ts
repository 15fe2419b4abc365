// `npm run bench -- --upload-s3`: one file (256 MiB; KILN_BENCH_UPLOAD_MIB) uploaded to and downloaded from a real
// kiln process, once with files on disk and once in a bucket of the local S3 test server (fauxqs, a JavaScript
// server, so S3 figures are bounded by it rather than by a real store). Reports throughput and the server's resident
// memory growth during each transfer: a streamed upload must not grow with the file (target: under 64 MiB).
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import { dirname } from "node:path";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { rssGrowth } from "../helpers/hostile-clients.ts";
import { tempDir } from "../helpers/kiln.ts";
import { startS3Server, type TestS3Server } from "../helpers/s3-server.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { patternSha256, rawUpload } from "../helpers/upload-client.ts";
import { markdownTable } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";

const MiB = 1024 * 1024;
const SIZE = Number(process.env.KILN_BENCH_UPLOAD_MIB ?? 256) * MiB;
const TARGET_MIB = 64;

async function transfer(store: "disk" | "s3", s3: TestS3Server): Promise<string[]> {
  const env = { KILN_MAX_FILE_BYTES: String(SIZE), ...(store === "s3" ? s3.env : {}) };
  const server = await startServerProcess({ dataDir: tempDir("kiln-bench-upload-s3-"), modelsDir: dirname(await tinyModelDir()), env });
  try {
    // One small upload first, so the route's own first-use costs are not counted as the big file's.
    expect((await rawUpload(server.url, { key: server.key, bytes: 1024 })).status).toBe(200);
    let t0 = performance.now();
    const up = await rssGrowth(server.pid, () => rawUpload(server.url, { key: server.key, bytes: SIZE }));
    const upS = (performance.now() - t0) / 1000;
    expect(up.result.status).toBe(200);
    const id = (JSON.parse(up.result.body) as { id: string }).id;

    t0 = performance.now();
    const down = await rssGrowth(server.pid, async () => {
      const res = await fetch(`${server.url}/v1/files/${id}/content`, { headers: { authorization: `Bearer ${server.key}` } });
      const hash = createHash("sha256");
      for await (const chunk of res.body!) hash.update(chunk);
      return hash.digest("hex");
    });
    const downS = (performance.now() - t0) / 1000;
    expect(down.result).toBe(patternSha256(SIZE));
    expect(up.growthMb).toBeLessThan(TARGET_MIB);
    const mibs = (s: number) => (SIZE / MiB / s).toFixed(0);
    return [store, mibs(upS), up.growthMb.toFixed(1), mibs(downS), down.growthMb.toFixed(1), up.baseMb.toFixed(0)];
  } finally {
    expect(await server.stop()).toBe(0);
  }
}

test(
  "a file uploaded and downloaded through kiln, on disk and in S3: throughput, and memory that does not grow with the file",
  async () => {
    const s3 = await startS3Server();
    try {
      const rows = [await transfer("disk", s3), await transfer("s3", s3)];
      console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
      console.log(`one file of ${SIZE / MiB} MiB over loopback to a separate kiln process, load ${loadavg()[0]!.toFixed(2)}\n`);
      console.log(markdownTable(["store", "upload MiB/s", "upload RSS growth (MiB)", "download MiB/s", "download RSS growth (MiB)", "RSS before (MiB)"], rows));
    } finally {
      await s3.stop();
    }
  },
  3_600_000,
);
