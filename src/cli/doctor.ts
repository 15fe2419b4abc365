// `kiln doctor`: runs every native piece kiln needs on this box and prints what works and how to fix what does not.
import { checkDataDir, checkDiskSpace, checkModelsDir, checkNativeLibraries, checkPostgres, checkSqlite, type CheckResult } from "../native/doctor-checks.ts";
import { checkCpu, checkModelFormats } from "../native/doctor-cpu-checks.ts";
import { checkAdapters } from "../native/doctor-gpu-checks.ts";
import { checkExecutionProviders, checkOnnxRuntime, checkSharp, checkWorker } from "../native/doctor-runtime-checks.ts";
import { formatTable } from "./table.ts";
import { collectVersions } from "./version.ts";

const STATUS_TEXT: Record<CheckResult["status"], string> = { ok: "ok", warn: "WARN", fail: "FAIL", skip: "n/a" };

/** 0 when every required check passed, else 1. Optional checks (warn, n/a) never fail the command. */
export function doctorExitCode(results: CheckResult[]): number {
  return results.some((r) => r.required && r.status !== "ok") ? 1 : 0;
}

/** The report: a table of checks, the sections of those with longer lines, the fix for each one that did not pass, and a one-line verdict. */
export function formatDoctorReport(results: CheckResult[], heading: string): string {
  const table = formatTable(
    ["check", "status", "detail"],
    results.map((r) => [r.name, STATUS_TEXT[r.status], r.detail]),
  );
  const sections = results.filter((r) => r.lines?.length).flatMap((r) => ["", `${r.name}:`, ...r.lines!.map((l) => `  ${l}`)]);
  const fixes = results.filter((r) => (r.status === "fail" || r.status === "warn") && r.fix).map((r) => `  ${r.name}${r.required ? "" : " (optional)"}: ${r.fix}`);
  const failed = results.filter((r) => r.required && r.status !== "ok").map((r) => r.name);
  const verdict = failed.length
    ? `${failed.length} required check${failed.length === 1 ? "" : "s"} failed: ${failed.join(", ")}. kiln will not serve reliably until ${failed.length === 1 ? "it is" : "they are"} fixed.`
    : "All required checks passed.";
  return [heading, "", table, ...sections, ...(fixes.length ? ["", "How to fix:", ...fixes] : []), "", verdict].join("\n");
}

/** What the checks look at: the data dir, the models dir, and the Postgres kiln's data is in (unset: SQLite in the data dir). */
export interface DoctorOptions {
  dataDir: string;
  modelsDir: string;
  databaseUrl?: string;
}

export async function runDoctorChecks(opts: DoctorOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  // The data dir comes first: SQLite and the disk check need it to exist (with Postgres, it still holds the files,
  // the settlement journal and the models).
  const dataDir = await checkDataDir(opts.dataDir);
  results.push(dataDir);
  if (opts.databaseUrl !== undefined) results.push(await checkPostgres(opts.databaseUrl));
  if (dataDir.status === "ok") results.push(...(opts.databaseUrl === undefined ? [await checkSqlite(opts.dataDir)] : []), await checkDiskSpace(opts.dataDir));
  else if (opts.databaseUrl === undefined) results.push({ name: "sqlite (WAL)", required: true, status: "fail", detail: "skipped: the data dir is not usable", fix: dataDir.fix });
  results.push(await checkModelsDir(opts.modelsDir));
  results.push(await checkCpu(), await checkModelFormats(opts.modelsDir));
  results.push(await checkNativeLibraries());
  results.push(await checkOnnxRuntime());
  results.push(await checkWorker());
  results.push(await checkSharp());
  // The adapters first: the webgpu provider's row below is read against them.
  results.push(await checkAdapters());
  results.push(...(await checkExecutionProviders()));
  return results;
}

export async function doctorCommand(opts: DoctorOptions, out: (text: string) => void = (t) => console.log(t)): Promise<number> {
  const v = collectVersions();
  const results = await runDoctorChecks(opts);
  out(formatDoctorReport(results, `kiln doctor: kiln ${v.kiln}, ${v.platform}, ${v.compiled ? "single executable" : "from source"}`));
  return doctorExitCode(results);
}
