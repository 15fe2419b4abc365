// A replica's one Redis connection in subscriber mode: channels are joined and left by any number of handlers, and
// every channel is subscribed again after the connection is lost. Pub/sub keeps nothing for a subscriber that is away,
// so each handler hears `ready` whenever its channel is (re)subscribed: what was published before may be missing.
import { RedisClient } from "bun";
import type { Logger } from "../log/logger.ts";
import { redactUrl } from "./connection.ts";

export interface ChannelHandler {
  message(text: string): void;
  ready(): void;
}

export interface SubscriberOptions {
  connectTimeoutMs?: number;
  /** Reconnect attempts back off from the first delay to the last, doubling. */
  retryMs?: readonly [number, number];
  logger?: Logger;
}

interface Wanted {
  handlers: Set<ChannelHandler>;
  /** On the current connection: not asked for, asked for, or subscribed (its handlers have heard `ready`). */
  state: "none" | "asked" | "active";
}

export class RedisSubscriber {
  /** Every channel subscribed or asked for on this connection, and the ones wanted once it is back. */
  private readonly channels = new Map<string, Wanted>();
  private client: RedisClient | null = null;
  private connecting = false;
  private retry: Timer | null = null;
  private delayMs: number;
  private down = false;
  private closed = false;
  private readonly retryMs: readonly [number, number];

  constructor(readonly url: string, private readonly opts: SubscriberOptions = {}) {
    this.retryMs = opts.retryMs ?? [100, 1000];
    this.delayMs = this.retryMs[0];
  }

  /** Hears the channel's messages until the returned leave; `ready` comes once it is subscribed (at once when it already is). */
  join(channel: string, h: ChannelHandler): () => void {
    let w = this.channels.get(channel);
    if (!w) this.channels.set(channel, (w = { handlers: new Set(), state: "none" }));
    w.handlers.add(h);
    if (w.state === "active") queueMicrotask(() => w.handlers.has(h) && this.tell(() => h.ready()));
    else if (w.state === "none" && this.client) this.subscribe(this.client, [channel]);
    else this.connect();
    return () => this.leave(channel, h);
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.client?.close();
    this.client = null;
    this.channels.clear();
  }

  private leave(channel: string, h: ChannelHandler): void {
    const w = this.channels.get(channel);
    if (!w || !w.handlers.delete(h) || w.handlers.size) return;
    // A channel being asked for stays until its answer (a listener subscribed twice would hear everything twice).
    if (w.state === "asked") return;
    this.channels.delete(channel);
    if (w.state === "active" && this.client) this.client.unsubscribe(channel).catch(() => undefined);
  }

  private readonly dispatch = (text: string, channel: string) => {
    const w = this.channels.get(channel);
    if (w) for (const h of w.handlers) this.tell(() => h.message(text));
  };

  /** One handler that throws must not keep the others from hearing. */
  private tell(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.opts.logger?.error("redis channel handler failed", { error: String(e) });
    }
  }

  private subscribe(client: RedisClient, channels: string[]): void {
    for (const c of channels) this.channels.get(c)!.state = "asked";
    client.subscribe(channels, this.dispatch).then(
      () => {
        if (this.client !== client) return;
        for (const c of channels) {
          const w = this.channels.get(c);
          if (!w || w.state !== "asked") continue;
          w.state = "active";
          if (!w.handlers.size) this.leaveEmpty(c);
          else for (const h of w.handlers) this.tell(() => h.ready());
        }
      },
      () => this.lost(client),
    );
  }

  /** A channel whose last handler left while it was asked for. */
  private leaveEmpty(channel: string): void {
    this.channels.delete(channel);
    this.client?.unsubscribe(channel).catch(() => undefined);
  }

  private connect(): void {
    if (this.closed || this.client || this.connecting || this.retry || !this.channels.size) return;
    this.connecting = true;
    const timeoutMs = this.opts.connectTimeoutMs ?? 2000;
    const client = new RedisClient(this.url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: timeoutMs });
    let timer: Timer | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`could not connect within ${timeoutMs} ms`)), timeoutMs);
    });
    Promise.race([client.connect(), late])
      .then(
        () => {
          if (this.closed) return client.close();
          client.onclose = () => this.lost(client);
          this.client = client;
          this.delayMs = this.retryMs[0];
          if (this.down) this.opts.logger?.info("redis subscriber connected again", { redis: redactUrl(this.url) });
          this.down = false;
          if (this.channels.size) this.subscribe(client, [...this.channels.keys()]);
        },
        (e: unknown) => {
          client.close();
          this.failed(e);
        },
      )
      .finally(() => {
        clearTimeout(timer);
        this.connecting = false;
      });
  }

  private lost(client: RedisClient): void {
    if (this.client !== client) return;
    this.client = null;
    client.close();
    for (const [channel, w] of this.channels) {
      if (w.handlers.size) w.state = "none";
      else this.channels.delete(channel);
    }
    this.failed(new Error("connection lost"));
  }

  private failed(e: unknown): void {
    if (this.closed) return;
    if (!this.down) {
      this.down = true;
      this.opts.logger?.warn("redis subscriber disconnected: followers of responses on other replicas read the store until it is back", {
        redis: redactUrl(this.url), error: e instanceof Error ? e.message : String(e),
      });
    }
    this.retry = setTimeout(() => {
      this.retry = null;
      this.connect();
    }, this.delayMs);
    this.retry.unref();
    this.delayMs = Math.min(this.delayMs * 2, this.retryMs[1]);
  }
}
