// Reads a streamed HTTP answer as text: up to a marker (to act mid-stream), then to its end.
export class StreamText {
  text = "";
  private readonly reader: { read(): Promise<{ value?: Uint8Array; done?: boolean }>; cancel(): Promise<void> };
  private readonly decoder = new TextDecoder();

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  /** Reads until the text holds `marker`; throws if the stream ends first. */
  async until(marker: string): Promise<this> {
    while (!this.text.includes(marker)) {
      const { value, done } = await this.reader.read();
      if (done) throw new Error(`the stream ended before ${marker}:\n${this.text}`);
      this.text += this.decoder.decode(value, { stream: true });
    }
    return this;
  }

  /** Leaves the stream, as a client that disconnects. */
  async leave(): Promise<void> {
    await this.reader.cancel();
  }

  /** Reads to the end of the stream. */
  async rest(): Promise<string> {
    for (;;) {
      const { value, done } = await this.reader.read();
      if (done) return this.text;
      this.text += this.decoder.decode(value, { stream: true });
    }
  }
}
