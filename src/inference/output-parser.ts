// Splits a model's raw streamed text into answer text, reasoning and tool calls, with the markers of the model's
// prompt format (e.g. <think>…</think> and <tool_call>{json}</tool_call>). Markers are structure, never answer
// text: one that means nothing where it stands (a stray close, an open inside a block, a thinking open after the
// answer began) is dropped. Thinking only comes first: a block opened after answer text or a call is answer text,
// so every format's output replays as valid input (reasoning always precedes what it leads to).
import type { ParsedEvent } from "./blocks.ts";
import { type CallBody, parseToolCallBody, readPartialCall } from "./call-body.ts";
import { newCallId as randomCallId } from "./call-id.ts";
import type { Markers } from "./prompt-format.ts";

export interface ParserOptions {
  /** The model's thinking markers, when it thinks (null: everything is answer text). */
  thinking: Markers | null;
  /** The model's tool-call markers, when the request has tools. */
  toolCall: Markers | null;
  /** The prompt already opened the thinking block (the template did), so the output starts inside it. */
  startInThinking?: boolean;
  /**
   * At most one tool call (parallel_tool_calls: false): calls after the first are dropped. The worker ends the turn
   * after the first call when the markers are one token each; this holds for markers of several tokens too.
   */
  singleCall?: boolean;
  /** Makes tool call ids; tests pass a deterministic one. */
  newCallId?: () => string;
}

type State = "text" | "think" | "tool";

/** Length of the longest suffix of `s` that is a proper prefix of one of `markers` (so it must be held back). */
export function heldSuffix(s: string, markers: string[]): number {
  let best = 0;
  for (const m of markers) {
    for (let k = Math.min(m.length - 1, s.length); k > best; k--) {
      if (s.endsWith(m.slice(0, k))) {
        best = k;
        break;
      }
    }
  }
  return best;
}

export class OutputParser {
  private state: State = "text";
  private buf = "";
  /** The body of the tool call being read (markers that stood inside it left out). */
  private body = "";
  private pendingWs = "";
  private toolCount = 0;
  private atThinkStart = false;
  private afterThink = false;
  /** Answer text or a call was emitted: a thinking open from here on means nothing. */
  private answered = false;
  /** Every marker this request's format gives meaning to. */
  private readonly markers: string[];

  constructor(private readonly opts: ParserOptions) {
    this.markers = [opts.thinking?.open, opts.thinking?.close, opts.toolCall?.open, opts.toolCall?.close].filter((m): m is string => !!m);
    if (opts.startInThinking && opts.thinking) {
      this.state = "think";
      this.atThinkStart = true;
    }
  }

  get toolCalls(): number {
    return this.toolCount;
  }

  /** True while the text being read is the model's thinking. */
  get inReasoning(): boolean {
    return this.state === "think";
  }

  push(delta: string): ParsedEvent[] {
    this.buf += delta;
    const out: ParsedEvent[] = [];
    while (this.step(out, false));
    return out;
  }

  /** Flushes what is held back; a tool call the output ended inside is reported as a cut call. */
  end(): ParsedEvent[] {
    const out: ParsedEvent[] = [];
    while (this.step(out, true));
    if (this.state === "tool") this.cutTool(out, this.body + this.buf);
    else if (this.state === "think") this.emitReasoning(out, this.buf);
    else this.emitText(out, this.buf);
    this.buf = "";
    this.body = "";
    if (this.pendingWs && this.toolCount === 0) out.push({ type: "text", text: this.pendingWs });
    this.pendingWs = "";
    return out;
  }

  /** Handles the first marker in the buffer, or emits what is safe when there is none; true when a marker was handled. */
  private step(out: ParsedEvent[], final: boolean): boolean {
    let hit = -1;
    let marker = "";
    for (const m of this.markers) {
      const i = this.buf.indexOf(m);
      if (i >= 0 && (hit < 0 || i < hit)) {
        hit = i;
        marker = m;
      }
    }
    if (hit < 0) {
      this.flushSafe(out, final);
      return false;
    }
    const before = this.buf.slice(0, hit);
    this.buf = this.buf.slice(hit + marker.length);
    const think = this.opts.thinking;
    const tool = this.opts.toolCall;
    if (this.state === "tool") {
      this.body += before;
      if (marker === tool!.close) {
        this.finishTool(out, this.body);
        this.body = "";
        this.state = "text";
      }
    } else if (this.state === "think") {
      if (marker === think!.close) {
        this.emitReasoning(out, before.replace(/\n$/, ""));
        this.state = "text";
        this.afterThink = true;
      } else this.emitReasoning(out, before);
    } else {
      this.emitText(out, before);
      if (marker === think?.open && !this.answered) {
        this.state = "think";
        this.atThinkStart = true;
      } else if (marker === tool?.open) this.state = "tool";
    }
    return true;
  }

  /** Without a marker in the buffer: emits all but a possible marker's beginning (a call's body is kept whole). */
  private flushSafe(out: ParsedEvent[], final: boolean): void {
    if (this.state === "tool") return;
    let keep = final ? 0 : heldSuffix(this.buf, this.markers);
    // In reasoning, a newline right before a possible </think> belongs to the marker's framing: hold it too.
    if (!final && this.state === "think" && this.buf[this.buf.length - keep - 1] === "\n") keep++;
    const ready = this.buf.slice(0, this.buf.length - keep);
    this.buf = this.buf.slice(ready.length);
    if (this.state === "think") this.emitReasoning(out, ready);
    else this.emitText(out, ready);
  }

  private emitText(out: ParsedEvent[], text: string): void {
    if (this.afterThink && text) {
      text = text.replace(/^\n/, "");
      this.afterThink = false;
    }
    if (!text) return;
    if (!text.trim()) {
      this.pendingWs += text;
      return;
    }
    out.push({ type: "text", text: this.pendingWs + text });
    this.pendingWs = "";
    this.answered = true;
  }

  private emitReasoning(out: ParsedEvent[], text: string): void {
    if (this.atThinkStart) {
      text = text.replace(/^\n/, "");
      if (text) this.atThinkStart = false;
    }
    if (text) out.push({ type: "reasoning", text });
  }

  /** A closed call: a call when its name can be read (its arguments as written if malformed), else its text. */
  private finishTool(out: ParsedEvent[], body: string): void {
    const call = parseToolCallBody(body) ?? readPartialCall(body, true);
    if (call) this.emitCall(out, call, false);
    else this.emitText(out, body.trim());
  }

  /** The output ended inside a call: a cut call when its name was written whole, else nothing worth reporting. */
  private cutTool(out: ParsedEvent[], body: string): void {
    const call = readPartialCall(body, false);
    if (call) this.emitCall(out, call, true);
  }

  private emitCall(out: ParsedEvent[], call: CallBody, cut: boolean): void {
    if (this.opts.singleCall && this.toolCount > 0) return;
    this.pendingWs = "";
    this.answered = true;
    this.toolCount++;
    out.push({ type: "tool_call_start", id: (this.opts.newCallId ?? randomCallId)(), name: call.name });
    if (call.arguments) out.push({ type: "tool_call_delta", arguments: call.arguments });
    out.push({ type: "tool_call_end", ...(cut ? { cut: true } : {}) });
  }
}
