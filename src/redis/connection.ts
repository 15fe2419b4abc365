// The Redis connection a kiln process keeps for what replicas share (rate limits, billing holds): it connects on demand,
// fails fast while Redis cannot be reached (503 backend_unavailable: limits fail closed) and runs Lua scripts by their SHA.
import { RedisClient } from "bun";
import { ApiError } from "../errors/api-error.ts";
import type { Logger } from "../log/logger.ts";

export const UNREACHABLE = "Rate limits and billing are kept in Redis, which this server cannot reach right now; retry shortly.";
/** Retry-After of that 503: Redis is back within seconds or it is an outage an operator must see to. */
const RETRY_AFTER_S = 5;

export interface RedisConnectionOptions {
  /** A connect attempt gives up after this long. */
  connectTimeoutMs?: number;
  /** A command without an answer by then fails (and the connection is dropped, so the next one starts afresh). */
  commandTimeoutMs?: number;
  logger?: Logger;
}

/** A Lua script and its SHA-1, run with EVALSHA (EVAL once after Redis lost its script cache). */
export class LuaScript {
  readonly sha: string;
  constructor(readonly name: string, readonly source: string) {
    this.sha = new Bun.CryptoHasher("sha1").update(source).digest("hex");
  }
}

/** Milliseconds of Redis's TIME reply ([seconds, microseconds] as strings). */
export function timeMs(reply: unknown): number {
  const [s, us] = reply as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

export class RedisConnection {
  private client: RedisClient | null = null;
  private connecting: Promise<RedisClient> | null = null;
  /** Whether the last attempt failed: the log says so once per outage, and once when Redis answers again. */
  private down = false;
  private closed = false;
  private readonly connectTimeoutMs: number;
  private readonly commandTimeoutMs: number;

  constructor(readonly url: string, private readonly opts: RedisConnectionOptions = {}) {
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 2000;
    this.commandTimeoutMs = opts.commandTimeoutMs ?? 2000;
  }

  /** Runs a command; 503 backend_unavailable when Redis cannot be reached, answers too late, or answers with an error. */
  async send(command: string, args: (string | number)[]): Promise<unknown> {
    try {
      const reply = await this.raw(command, args.map(String));
      this.up();
      return reply;
    } catch (e) {
      throw this.failed(e, command);
    }
  }

  /**
   * Sends a command whose answer nobody waits for (a pub/sub message): on a live connection it is written at once,
   * without a timer of its own; otherwise it goes the way `send` does (connecting first). A failure is logged as
   * `send` logs it, and the caller never hears of it.
   */
  fire(command: string, args: string[]): void {
    const client = this.client?.connected && !this.closed ? this.client : null;
    if (!client) {
      this.send(command, args).catch(() => undefined);
      return;
    }
    client.send(command, args).then(
      () => this.up(),
      (e: unknown) => {
        if (!isServerError(e) && this.client === client) this.drop();
        this.failed(e, command);
      },
    );
  }

  /** Runs a script with its keys and arguments, loading it first when Redis does not have it (a restart empties the cache). */
  async run(script: LuaScript, keys: string[], args: (string | number)[]): Promise<unknown> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    try {
      let reply: unknown;
      try {
        reply = await this.raw("EVALSHA", [script.sha, ...tail]);
      } catch (e) {
        if (!String((e as Error).message).startsWith("NOSCRIPT")) throw e;
        reply = await this.raw("EVAL", [script.source, ...tail]);
      }
      this.up();
      return reply;
    } catch (e) {
      throw this.failed(e, `script ${script.name}`);
    }
  }

  /** Redis's own clock, in milliseconds. */
  async time(): Promise<number> {
    return timeMs(await this.send("TIME", []));
  }

  close(): void {
    this.closed = true;
    this.client?.close();
    this.client = null;
  }

  private async raw(command: string, args: string[]): Promise<unknown> {
    if (this.closed) throw new Error("the Redis connection was closed");
    const client = this.client?.connected ? this.client : await this.connect();
    let timer: Timer | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.commandTimeoutMs} ms`)), this.commandTimeoutMs);
    });
    try {
      return await Promise.race([client.send(command, args), late]);
    } catch (e) {
      // A connection that stopped answering is dropped; one that answered with an error is fine.
      if (!isServerError(e) && this.client === client) this.drop();
      throw e;
    } finally {
      clearTimeout(timer);
    }
  }

  /** One connect at a time, shared by the calls waiting for it. Bun's own reconnecting is off: it would queue or hang calls. */
  private connect(): Promise<RedisClient> {
    this.connecting ??= (async () => {
      this.drop();
      const client = new RedisClient(this.url, { autoReconnect: false, enableOfflineQueue: false, connectionTimeout: this.connectTimeoutMs });
      let timer: Timer | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`could not connect within ${this.connectTimeoutMs} ms`)), this.connectTimeoutMs);
      });
      try {
        await Promise.race([client.connect(), late]);
      } catch (e) {
        client.close();
        throw e;
      } finally {
        clearTimeout(timer);
      }
      if (this.closed) {
        client.close();
        throw new Error("the Redis connection was closed");
      }
      this.client = client;
      return client;
    })().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private drop(): void {
    this.client?.close();
    this.client = null;
  }

  private up(): void {
    if (!this.down) return;
    this.down = false;
    this.opts.logger?.info("redis reachable again", { redis: redactUrl(this.url) });
  }

  private failed(e: unknown, what: string): ApiError {
    const error = e instanceof Error ? e.message : String(e);
    if (isServerError(e)) {
      this.opts.logger?.error("redis refused a command", { redis: redactUrl(this.url), command: what, error });
    } else if (!this.down) {
      this.down = true;
      this.opts.logger?.warn("redis unreachable: limited and billed requests get 503 until it answers", { redis: redactUrl(this.url), command: what, error });
    }
    return ApiError.backendUnavailable(UNREACHABLE, RETRY_AFTER_S);
  }
}

/** An error reply from Redis itself (as opposed to no connection, or no answer). */
function isServerError(e: unknown): boolean {
  return (e as { code?: string } | null)?.code === "ERR_REDIS_SERVER_ERROR";
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.href;
  } catch {
    return "(unparsable URL)";
  }
}
