// Types for build/setup-browser.mjs, which stays plain JavaScript because Node runs set-up before Bun exists.
export declare const CHROMIUM: string;
export declare const MANUAL: string;
export declare function probeChromium(path?: string): { ok: true; version: string } | { ok: false; why: string };
export interface MachineState {
  isRoot: boolean;
  hasSudo: boolean;
  hasAptGet: boolean;
  /** The binary exists but does not run. */
  broken: boolean;
}
export declare function browserPlan(state: MachineState): { install: string[]; update: string[]; fail?: undefined } | { fail: string; install?: undefined; update?: undefined };
export declare function setupBrowser(): void;
