// A stream a test feeds by hand: push chunks, then end it or make it fail (a body cut or refused part-way).

export function handFed() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => void (controller = c),
    cancel: () => void (state.cancelled = true),
  });
  return { stream, state, push: (b: Uint8Array) => controller.enqueue(b), end: () => controller.close(), fail: (e: Error) => controller.error(e) };
}
