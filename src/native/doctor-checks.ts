// The host checks behind `kiln doctor` (data dir, SQLite or Postgres, disk, models); each says how to fix what fails.
import { accessSync, constants, existsSync, mkdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { probeDatabase, probePostgres } from "../db/probe.ts";
import { scanModels } from "../models/registry.ts";
import { nativeRuntime } from "./preload.ts";

export type CheckStatus = "ok" | "warn" | "fail" | "skip";

export interface CheckResult {
  name: string;
  /** A failed required check makes `kiln doctor` exit 1: kiln cannot serve without it. */
  required: boolean;
  status: CheckStatus;
  detail: string;
  fix?: string;
  /** Longer lines shown under the table in a section named after the check (one per adapter, say). */
  lines?: string[];
}

/**
 * The useful part of a native error: ONNX Runtime prefixes its messages with a source path and a failed
 * assertion ("/onnxruntime_src/...cc:136 ... was false. Failed to get a WebGPU adapter: ...").
 */
export function conciseError(text: string): string {
  let line = text.split("\n")[0]!.replace(/^Error: /, "");
  const afterAssert = line.indexOf(" was false. ");
  if (afterAssert >= 0) line = line.slice(afterAssert + " was false. ".length);
  line = line.replace(/^(\/\S+:\d+ )+/, "");
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

const message = (e: unknown) => conciseError(e instanceof Error ? e.message : String(e));

/** Runs `fn`; an exception becomes a failed result carrying `fix`. */
export async function runCheck(name: string, required: boolean, fix: string, fn: () => Promise<Omit<CheckResult, "name" | "required">>): Promise<CheckResult> {
  try {
    return { name, required, ...(await fn()) };
  } catch (e) {
    return { name, required, status: required ? "fail" : "warn", detail: message(e), fix };
  }
}

export function checkDataDir(dataDir: string): Promise<CheckResult> {
  return runCheck("data dir", true, `Create it and let the user running kiln write to it (mkdir -p ${dataDir}), or choose another with --data-dir / KILN_DATA_DIR.`, async () => {
    mkdirSync(dataDir, { recursive: true });
    const probe = join(dataDir, `.doctor-${process.pid}`);
    writeFileSync(probe, "ok");
    rmSync(probe);
    return { status: "ok", detail: `${dataDir} is writable` };
  });
}

export function checkSqlite(dataDir: string): Promise<CheckResult> {
  const fix = "SQLite's WAL mode needs a local filesystem with shared memory (not NFS/SMB): put the data dir on a local disk.";
  return runCheck("sqlite (WAL)", true, fix, async () => ({ status: "ok", detail: await probeDatabase(dataDir) }));
}

export function checkPostgres(url: string): Promise<CheckResult> {
  const fix = "Check KILN_DATABASE_URL (host, port, user, password, database name) and that this box reaches the server; the user needs to create tables in the database (kiln migrates it at start).";
  return runCheck("postgres", true, fix, async () => ({ status: "ok", detail: await probePostgres(url) }));
}

export function checkDiskSpace(dataDir: string, minBytes = 2 * 1024 ** 3): Promise<CheckResult> {
  return runCheck("disk space", false, "Free some space on the data dir's filesystem.", async () => {
    const st = statfsSync(dataDir);
    const free = st.bavail * st.bsize;
    const gib = (free / 1024 ** 3).toFixed(1);
    if (free < minBytes) return { status: "warn", detail: `${gib} GiB free in ${dataDir}`, fix: "Models and uploaded files need room: free space or move the data dir." };
    return { status: "ok", detail: `${gib} GiB free` };
  });
}

export function checkNativeLibraries(): Promise<CheckResult> {
  return runCheck("native libraries", true, "Make the data dir (or the temp dir) writable and on a filesystem that allows executables (not mounted noexec).", async () => {
    if (!nativeRuntime) return { status: "ok", detail: "from node_modules (running from source)" };
    return { status: "ok", detail: `libvips and ONNX Runtime unpacked in ${nativeRuntime.dir}` };
  });
}

export function checkModelsDir(modelsDir: string): Promise<CheckResult> {
  return runCheck("models dir", true, `Let the user running kiln write to ${modelsDir}, or choose another with --models-dir / KILN_MODELS_DIR.`, async () => {
    if (!existsSync(modelsDir)) {
      accessSync(existingParent(modelsDir), constants.W_OK);
      return { status: "ok", detail: `${modelsDir} will be created at first start (with the built-in model)` };
    }
    accessSync(modelsDir, constants.R_OK | constants.W_OK);
    const { models, problems } = scanModels(modelsDir);
    const names = models.map((m) => m.id).join(", ") || "none yet";
    if (problems.length) {
      const first = problems[0]!;
      return { status: "warn", detail: `${models.length} served (${names}); ${problems.length} skipped: ${first.folder}: ${first.reason}`, fix: "Fix or remove the skipped folders (`kiln models list` shows every problem)." };
    }
    return { status: "ok", detail: `${models.length} model folder(s): ${names}` };
  });
}

function existingParent(path: string): string {
  let dir = path;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}
