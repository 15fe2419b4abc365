// `kiln models import <file.gguf> --force` as an operator runs it, timed, with the import process's peak RSS.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers/kiln.ts";

export interface TimedImport {
  id: string;
  dir: string;
  seconds: number;
  /** The import process's VmHWM, read every 20 ms while it ran (a high-water mark: only a peak in its last 20 ms is missed). */
  peakRssMb: number;
}

const hwmMb = (pid: number): number | null => {
  try {
    return Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;
  } catch {
    return null;
  }
};

/** Imports `path` into `modelsDir` (every time: the import is what is timed); the folder must hold that one model. */
export async function timedImport(path: string, modelsDir: string): Promise<TimedImport> {
  const root = join(import.meta.dir, "..", "..");
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, join(root, "src", "main.ts"), "models", "import", path, "--force"], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, KILN_MODELS_DIR: modelsDir, KILN_DATA_DIR: tempDir("kiln-gguf-import-"), KILN_LOG_LEVEL: "warn" },
  });
  let peak = 0;
  const poll = setInterval(() => (peak = Math.max(peak, hwmMb(proc.pid) ?? 0)), 20);
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  clearInterval(poll);
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`kiln models import ${path} exited ${code}:\n${out}${err}`);
  const id = /^imported (\S+) in /m.exec(out)?.[1];
  const folders = readdirSync(modelsDir).filter((f) => !f.startsWith("."));
  if (!id || !folders.includes(id)) throw new Error(`kiln models import ${path}: no imported model in its output or ${modelsDir}:\n${out}`);
  return { id, dir: join(modelsDir, id), seconds, peakRssMb: peak };
}
