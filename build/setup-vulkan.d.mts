// Types for build/setup-vulkan.mjs, which stays plain JavaScript because Node runs set-up before Bun exists.
export declare const SOURCE_PATH: string;
export declare const SOURCE_TEXT: string;
export declare const MIN_MESA_MAJOR: number;
export declare const MANUAL: string;
export declare const ELSEWHERE: string;
export declare function installedPackages(dpkgOutput: string): Map<string, string>;
export declare function upstreamMajor(version: string): number | null;
export declare function isBookworm(osRelease: string): boolean;
export interface VulkanMachineState {
  /** The text of /etc/os-release, "" when missing. */
  osRelease: string;
  /** dpkg-query's output for mesa-vulkan-drivers and libvulkan1, "" without dpkg. */
  dpkgOutput: string;
  /** The current text of SOURCE_PATH, "" when missing. */
  sourceText: string;
  isRoot: boolean;
  hasSudo: boolean;
  hasAptGet: boolean;
}
import type { AptStep } from "./apt.mjs";
export type VulkanStep = AptStep;
export type VulkanPlan =
  | { ready: string; note?: undefined; fail?: undefined; steps?: undefined; why?: undefined }
  | { note: string; ready?: undefined; fail?: undefined; steps?: undefined; why?: undefined }
  | { fail: string; ready?: undefined; note?: undefined; steps?: undefined; why?: undefined }
  | { why: string; steps: VulkanStep[]; ready?: undefined; note?: undefined; fail?: undefined };
export declare function vulkanPlan(state: VulkanMachineState): VulkanPlan;
export declare function setupVulkan(): void;
