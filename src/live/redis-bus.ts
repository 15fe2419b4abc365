// The replicas' live bus over Redis pub/sub (KILN_REDIS_URL): a channel per response for its events and end, and one
// per running job for its cancel. Publishing goes over the replica's Redis connection and waits for nothing; the
// subscriptions share one subscriber connection (src/redis/subscriber.ts).
import { ApiError } from "../errors/api-error.ts";
import type { Logger } from "../log/logger.ts";
import type { RedisConnection } from "../redis/connection.ts";
import { RedisSubscriber } from "../redis/subscriber.ts";
import { type BusSubscriber, CANCEL, cancelChannel, decodeMessage, encodeEnd, encodeEvent, eventsChannel, type LiveBus, type LiveEvent } from "./live-bus.ts";

const UNREACHABLE = "This response runs on another replica, which is reached through Redis, and this server cannot reach Redis right now; retry shortly.";

export class RedisLiveBus implements LiveBus {
  private readonly subscriber: RedisSubscriber;

  constructor(
    private readonly conn: RedisConnection,
    private readonly o: { prefix?: string; logger?: Logger; retryMs?: readonly [number, number] } = {},
  ) {
    this.subscriber = new RedisSubscriber(conn.url, { logger: o.logger, retryMs: o.retryMs });
  }

  private get prefix(): string {
    return this.o.prefix ?? "kiln:";
  }

  publish(id: string, ev: LiveEvent): void {
    this.send(eventsChannel(this.prefix, id), encodeEvent(ev));
  }

  end(id: string): void {
    this.send(eventsChannel(this.prefix, id), encodeEnd());
  }

  subscribe(id: string, s: BusSubscriber): () => void {
    return this.subscriber.join(eventsChannel(this.prefix, id), {
      message: (text) => {
        const m = decodeMessage(text);
        if (m?.kind === "event") s.event(m.ev);
        else if (m) s.end();
      },
      ready: () => s.ready(),
    });
  }

  async cancel(id: string): Promise<number> {
    try {
      return Number(await this.conn.send("PUBLISH", [cancelChannel(this.prefix, id), CANCEL]));
    } catch (e) {
      if (e instanceof ApiError && e.status === 503) throw ApiError.backendUnavailable(UNREACHABLE, 5);
      throw e;
    }
  }

  accept(id: string, onCancel: () => void): () => void {
    return this.subscriber.join(cancelChannel(this.prefix, id), { message: (text) => text === CANCEL && onCancel(), ready: () => undefined });
  }

  close(): void {
    this.subscriber.close();
  }

  /** Fire and forget: a follower that misses it finds the event in the store (the connection logs an outage once). */
  private send(channel: string, text: string): void {
    this.conn.fire("PUBLISH", [channel, text]);
  }
}
