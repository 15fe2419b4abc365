// How replicas that share one database tell each other about the responses they produce: an event once stored, a job's
// end, and a cancel for whoever runs a job. Fire-and-forget: a message may be lost, so what reads it treats the store
// as the truth and a message as a reason to look again. The wire format is here, pure; redis-bus.ts sends it.

export interface LiveEvent {
  sequence: number;
  type: string;
  /** The event's JSON, sequence_number included, exactly as stored and sent. */
  json: string;
}

export interface BusSubscriber {
  event(ev: LiveEvent): void;
  /** The job ended where it ran (its last event is stored). */
  end(): void;
  /** The subscription was made, or made again after a lost connection: anything published before may be missing. */
  ready(): void;
}

export interface LiveBus {
  /** An event of response `id`, published once it is stored. */
  publish(id: string, ev: LiveEvent): void;
  /** Response `id`'s job ended here, after its last event was published. */
  end(id: string): void;
  /** Hears `id`'s events and end, from whichever replica runs it, until the returned unsubscribe. */
  subscribe(id: string, s: BusSubscriber): () => void;
  /** Sends a cancel to whoever runs `id`: how many replicas running it heard it (0: none does now). Rejects when it cannot be sent. */
  cancel(id: string): Promise<number>;
  /** While this replica runs `id`: cancels sent to it call `onCancel`, until the returned release. */
  accept(id: string, onCancel: () => void): () => void;
  close(): void;
}

export type BusMessage = { kind: "event"; ev: LiveEvent } | { kind: "end" };

const END = "end";
export const CANCEL = "cancel";

/** The channel of a response's events and end. */
export function eventsChannel(prefix: string, id: string): string {
  return `${prefix}live:${id}`;
}

/** The channel the replica running a response listens on for its cancel. */
export function cancelChannel(prefix: string, id: string): string {
  return `${prefix}live:${id}:cancel`;
}

/** `<sequence> <type> <json>`: the event's JSON as stored, with what a follower needs without parsing it. */
export function encodeEvent(ev: LiveEvent): string {
  return `${ev.sequence} ${ev.type} ${ev.json}`;
}

export function encodeEnd(): string {
  return END;
}

/** The message, or null for text no kiln sent (it is ignored: the store still has the truth). */
export function decodeMessage(text: string): BusMessage | null {
  if (text === END) return { kind: "end" };
  const a = text.indexOf(" ");
  const b = a < 0 ? -1 : text.indexOf(" ", a + 1);
  if (b < 0) return null;
  const sequence = Number(text.slice(0, a));
  if (!Number.isSafeInteger(sequence) || sequence < 0) return null;
  return { kind: "event", ev: { sequence, type: text.slice(a + 1, b), json: text.slice(b + 1) } };
}
