// Types for build/setup-browser.mjs, which stays plain JavaScript because Node runs set-up before Bun exists.
import type { AptStep } from "./apt.mjs";
export declare const CHROMIUM: string;
export declare const MIN_CHROMIUM_MAJOR: number;
export declare const MANUAL: string;
export type ChromiumProbe = { ok: true; version: string; major: number | null } | { ok: false; why: string };
export declare function probeChromium(path?: string): ChromiumProbe;
export declare function chromiumShortfall(probe: ChromiumProbe): string | null;
export interface MachineState {
  isRoot: boolean;
  hasSudo: boolean;
  hasAptGet: boolean;
  /** The binary exists but does not run. */
  broken: boolean;
}
export declare function browserPlan(state: MachineState): { steps: AptStep[]; fail?: undefined } | { fail: string; steps?: undefined };
export declare function setupBrowser(): void;
