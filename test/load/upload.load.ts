// `npm run bench -- --upload`: a 1 GiB file uploaded to a real kiln process through a real socket, with the server's
// resident memory sampled throughout (VmRSS every 20 ms, and the kernel's VmHWM peak): the upload streams to disk,
// so memory must not grow with the file (target: under 64 MiB). Then the bytes are downloaded and compared, and
// a file one byte over the limit is refused with nothing left on disk and no row.
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readdirSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join } from "node:path";
import { describeCpu, readCpuInfo } from "../../src/native/cpu.ts";
import { rssGrowth } from "../helpers/hostile-clients.ts";
import { tempDir } from "../helpers/kiln.ts";
import { tinyModelDir } from "../helpers/tiny-model.ts";
import { patternSha256, rawUpload } from "../helpers/upload-client.ts";
import { markdownTable } from "./metrics.ts";
import { startServerProcess } from "./server-process.ts";

const MiB = 1024 * 1024;
const SIZE = Number(process.env.KILN_BENCH_UPLOAD_MIB ?? 1024) * MiB;
const TARGET_MIB = 64;

async function vmHwmMb(pid: number): Promise<number> {
  return Number((await Bun.file(`/proc/${pid}/status`).text()).match(/VmHWM:\s+(\d+)/)?.[1] ?? 0) / 1024;
}

test(
  "a 1 GiB upload streams to disk: the server's memory does not grow with the file",
  async () => {
    const dataDir = tempDir("kiln-bench-upload-");
    const server = await startServerProcess({ dataDir, modelsDir: dirname(await tinyModelDir()), env: { KILN_MAX_FILE_BYTES: String(SIZE) } });
    const list = async () => ((await (await fetch(`${server.url}/v1/files`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { data: { id: string }[] }).data;
    try {
      // One small upload first, so the route's own first-use costs are not counted as the big file's.
      expect((await rawUpload(server.url, { key: server.key, bytes: 1024 })).status).toBe(200);
      const hwmBefore = await vmHwmMb(server.pid);
      const t0 = performance.now();
      const { result, baseMb, growthMb } = await rssGrowth(server.pid, () => rawUpload(server.url, { key: server.key, bytes: SIZE }));
      const seconds = (performance.now() - t0) / 1000;
      const hwmAfter = await vmHwmMb(server.pid);
      expect(result.status).toBe(200);
      const file = JSON.parse(result.body) as { id: string; bytes: number };
      expect(file.bytes).toBe(SIZE);

      // The bytes come back as they were sent.
      const download = await fetch(`${server.url}/v1/files/${file.id}/content`, { headers: { authorization: `Bearer ${server.key}` } });
      expect(download.headers.get("content-length")).toBe(String(SIZE));
      const hash = createHash("sha256");
      for await (const chunk of download.body!) hash.update(chunk);
      expect(hash.digest("hex")).toBe(patternSha256(SIZE));

      // One byte over: refused, nothing on disk, no row.
      const over = await rawUpload(server.url, { key: server.key, bytes: SIZE + 1 });
      expect(over.status).toBe(400);
      expect(JSON.parse(over.body).error.param).toBe("file");
      expect(readdirSync(join(dataDir, "files", "tmp"))).toEqual([]);
      expect(readdirSync(join(dataDir, "files")).filter((n) => n !== "tmp").length).toBe(2);
      expect((await list()).length).toBe(2);

      console.log(`\ncpu: ${describeCpu(readCpuInfo())}`);
      console.log(`one upload of ${SIZE / MiB} MiB over loopback to a separate kiln process, load ${loadavg()[0]!.toFixed(2)}\n`);
      console.log(markdownTable(["file", "seconds", "MiB/s", "RSS before (MiB)", "peak RSS growth, sampled (MiB)", "VmHWM growth (MiB)", "target"], [[
        `${SIZE / MiB} MiB`, seconds.toFixed(1), (SIZE / MiB / seconds).toFixed(0), baseMb.toFixed(0), growthMb.toFixed(1), (hwmAfter - hwmBefore).toFixed(1), `< ${TARGET_MIB} MiB`,
      ]]));
      expect(growthMb).toBeLessThan(TARGET_MIB);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  },
  3_600_000,
);
