// Types for build/setup-cluster.mjs, which stays plain JavaScript because Node runs set-up before Bun exists.
import type { AptStep } from "./apt.mjs";
export interface ClusterServer {
  binary: string;
  /** The Debian package that installs it. */
  pkg: string;
  /** Where Debian puts the binary when it is not on PATH; one `*` segment allowed. */
  dirs: string[];
  version: string[];
}
export declare const SERVERS: ClusterServer[];
export declare const MANUAL: string;
export declare function expandDir(pattern: string, list?: (dir: string) => string[]): string[];
export declare function findBinary(server: Pick<ClusterServer, "binary" | "dirs">, pathEnv?: string, exists?: (path: string) => boolean): string | null;
export interface ClusterMachineState {
  /** Packages whose binaries were not found. */
  missing: string[];
  isRoot: boolean;
  hasSudo: boolean;
  hasAptGet: boolean;
}
export type ClusterPlan =
  | { ready: true; fail?: undefined; steps?: undefined }
  | { fail: string; ready?: undefined; steps?: undefined }
  | { steps: AptStep[]; ready?: undefined; fail?: undefined };
export declare function clusterPlan(state: ClusterMachineState): ClusterPlan;
export declare function setupCluster(): void;
