// Types for build/apt.mjs, which stays plain JavaScript because Node runs set-up before Bun exists.
export interface AptStep {
  what: string;
  argv: string[];
  input?: string;
  /** An `apt-get update`: skipped when this set-up run already refreshed the same sources. */
  update?: boolean;
  /** Writes an apt source, so the lists must be refreshed again. */
  sources?: boolean;
}
export declare function onPath(name: string): boolean;
export declare function machineAccess(): { isRoot: boolean; hasSudo: boolean; hasAptGet: boolean };
export declare function privilegePrefix(state: { isRoot: boolean; hasSudo: boolean }): string[] | null;
export declare function updateStep(prefix: string[]): AptStep;
export declare function majorOf(version: string): number | null;
export declare function lastLine(text: string): string | undefined;
export declare function runQuiet(argv: string[], input?: string): { ok: boolean; tail: string };
export declare function runSteps(steps: AptStep[], run?: (argv: string[], input?: string) => { ok: boolean; tail: string }): { what: string; tail: string } | null;
export declare function seconds(startedMs: number): string;
