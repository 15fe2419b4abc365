// A scripted stand-in for a Bun Worker: records what the supervisor posts and lets a test answer, crash or close it.
import type { LifecycleFromWorker } from "../../../src/protocol/supervisor.ts";

/** Any message the supervisor or a backend posts. */
export type Posted = { type: string; [key: string]: unknown };

export class FakeWorker {
  readonly posted: Posted[] = [];
  onmessage: ((ev: MessageEvent) => void) | null = null;
  onerror: ((ev: ErrorEvent) => void) | null = null;
  terminated = false;
  private closeListeners: (() => void)[] = [];

  postMessage(msg: Posted): void {
    this.posted.push(msg);
  }

  addEventListener(type: string, fn: () => void): void {
    if (type === "close") this.closeListeners.push(fn);
  }

  terminate(): void {
    this.terminated = true;
    this.close();
  }

  /** A message from the worker to the supervisor. */
  reply(msg: LifecycleFromWorker | Posted): void {
    this.onmessage?.({ data: msg } as MessageEvent);
  }

  crash(message: string): void {
    this.onerror?.({ message } as ErrorEvent);
  }

  close(): void {
    for (const fn of this.closeListeners.splice(0)) fn();
  }

  types(): string[] {
    return this.posted.map((m) => m.type);
  }
}
