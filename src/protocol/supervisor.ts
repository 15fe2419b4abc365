// The lifecycle messages every worker kind speaks with its supervisor (load, health, stop); plain data for postMessage.
import type { DeviceSeat } from "../devices/device-turns.ts";

/** Main thread → worker: what the supervisor itself sends, whatever the worker's kind. */
export type LifecycleToWorker<Spec> =
  /** `seat`: a webgpu worker's seat in the process's device turns (src/devices/device-turns.ts). */
  | { type: "load"; model: Spec; seat?: DeviceSeat }
  | { type: "ping"; nonce: number }
  | { type: "shutdown" };

/** What a worker says of its load, for the log: where it runs, and how ONNX Runtime placed the graph's nodes. */
export interface LoadReport {
  device: "cpu" | "webgpu";
  dtype: string;
  /** Node counts per execution provider and op, e.g. "WebGpuExecutionProvider: 24 MatMulNBits, …; CPUExecutionProvider: 9 Shape". */
  placement?: string;
}

/** Worker → main thread: what the supervisor itself handles; every other message goes to the worker's backend. */
export type LifecycleFromWorker =
  /** A webgpu worker's turn at the device came and its load began: the load timeout counts from here. */
  | { type: "load_started" }
  | { type: "loaded"; modelId: string; ms: number; report?: LoadReport }
  | { type: "load_error"; modelId: string; message: string }
  /** Answer to a ping: the thread's memory and how much work it has running and waiting. */
  | { type: "pong"; nonce: number; rssBytes: number; active: number; queued: number }
  /** The worker's state is unreliable: it is retired and replaced. */
  | { type: "fatal"; message: string };
