// Splits a model's raw streamed text into answer text, reasoning and tool calls, with the markers of the model's
// prompt format (e.g. <think>…</think> and <tool_call>{json}</tool_call>).
import type { ParsedEvent } from "./blocks.ts";
import { newCallId as randomCallId } from "./ids.ts";
import type { Markers } from "./prompt-format.ts";

export interface ParserOptions {
  /** The model's thinking markers, when it thinks (null: everything is answer text). */
  thinking: Markers | null;
  /** The model's tool-call markers, when the request has tools. */
  toolCall: Markers | null;
  /** The prompt already opened the thinking block (the template did), so the output starts inside it. */
  startInThinking?: boolean;
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
  private pendingWs = "";
  private toolCount = 0;
  private atThinkStart = false;
  private afterThink = false;

  private readonly think: Markers;
  private readonly tool: Markers;

  constructor(private readonly opts: ParserOptions) {
    // Unused markers are never searched for (see markersFor), so any placeholder will do.
    this.think = opts.thinking ?? { open: "\u0000think", close: "\u0000/think" };
    this.tool = opts.toolCall ?? { open: "\u0000tool", close: "\u0000/tool" };
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
    for (;;) {
      const before = this.buf.length + this.state;
      this.step(out, false);
      if (this.buf.length + this.state === before) break;
    }
    return out;
  }

  /** Flushes what is held back; an unterminated tool call is returned as plain text. */
  end(): ParsedEvent[] {
    const out: ParsedEvent[] = [];
    this.step(out, true);
    if (this.state === "tool") this.emitText(out, this.tool.open + this.buf);
    else if (this.state === "think") this.emitReasoning(out, this.buf);
    else this.emitText(out, this.buf);
    this.buf = "";
    if (this.pendingWs && this.toolCount === 0) out.push({ type: "text", text: this.pendingWs });
    this.pendingWs = "";
    return out;
  }

  private markersFor(state: State): string[] {
    if (state === "think") return [this.think.close];
    if (state === "tool") return [this.tool.close];
    const m: string[] = [];
    if (this.opts.thinking) m.push(this.think.open);
    if (this.opts.toolCall) m.push(this.tool.open);
    return m;
  }

  private step(out: ParsedEvent[], final: boolean): void {
    const markers = this.markersFor(this.state);
    let hit = -1;
    let marker = "";
    for (const m of markers) {
      const i = this.buf.indexOf(m);
      if (i >= 0 && (hit < 0 || i < hit)) {
        hit = i;
        marker = m;
      }
    }
    if (hit < 0) {
      if (this.state === "tool") return; // keep buffering the call body
      let keep = final ? 0 : heldSuffix(this.buf, markers);
      // In reasoning, a newline right before a possible </think> belongs to the marker's framing: hold it too.
      if (!final && this.state === "think" && this.buf[this.buf.length - keep - 1] === "\n") keep++;
      const ready = this.buf.slice(0, this.buf.length - keep);
      this.buf = this.buf.slice(ready.length);
      if (this.state === "think") this.emitReasoning(out, ready);
      else this.emitText(out, ready);
      return;
    }
    const before = this.buf.slice(0, hit);
    this.buf = this.buf.slice(hit + marker.length);
    if (marker === this.think.open) {
      this.emitText(out, before);
      this.state = "think";
      this.atThinkStart = true;
    } else if (marker === this.think.close) {
      this.emitReasoning(out, before.replace(/\n$/, ""));
      this.state = "text";
      this.afterThink = true;
    } else if (marker === this.tool.open) {
      this.emitText(out, before);
      this.state = "tool";
    } else {
      this.finishTool(out, before);
      this.state = "text";
    }
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
  }

  private emitReasoning(out: ParsedEvent[], text: string): void {
    if (this.atThinkStart) {
      text = text.replace(/^\n/, "");
      if (text) this.atThinkStart = false;
    }
    if (text) out.push({ type: "reasoning", text });
  }

  private finishTool(out: ParsedEvent[], body: string): void {
    const call = parseToolCallBody(body);
    if (!call) {
      this.emitText(out, this.tool.open + body + this.tool.close);
      return;
    }
    this.pendingWs = "";
    this.toolCount++;
    out.push({ type: "tool_call_start", id: (this.opts.newCallId ?? randomCallId)(), name: call.name });
    out.push({ type: "tool_call_delta", arguments: call.arguments });
    out.push({ type: "tool_call_end" });
  }
}

/** `{"name": "...", "arguments": {...}}` → name and arguments as a JSON string; null when malformed. */
export function parseToolCallBody(body: string): { name: string; arguments: string } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.trim());
  } catch {
    return null;
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return null;
  const { name, arguments: args } = parsed as { name?: unknown; arguments?: unknown };
  if (typeof name !== "string" || !name) return null;
  if (args === undefined) return { name, arguments: "{}" };
  if (typeof args === "string") {
    try {
      JSON.parse(args);
      return { name, arguments: args };
    } catch {
      return null;
    }
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
  return { name, arguments: rawArguments(body) ?? JSON.stringify(args) };
}

/**
 * The `arguments` object's own text with insignificant whitespace dropped: numbers keep the digits the model
 * wrote (JSON.stringify would turn one past the double range into null). Null when the body is not one object.
 */
function rawArguments(body: string): string | null {
  let depth = 0;
  let key = "";
  let out = "";
  let start = -1;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!;
    if (ch === '"') {
      let j = i + 1;
      while (j < body.length && body[j] !== '"') j += body[j] === "\\" ? 2 : 1;
      const str = body.slice(i, j + 1);
      if (start >= 0) out += str;
      else if (depth === 1) key = str;
      i = j;
      continue;
    }
    if (/\s/.test(ch)) continue;
    if (start >= 0) out += ch;
    if (ch === "{" || ch === "[") {
      if (depth === 1 && key === '"arguments"' && start < 0 && ch === "{") {
        start = depth;
        out = ch;
      }
      depth++;
    } else if (ch === "}" || ch === "]") {
      depth--;
      if (start >= 0 && depth === start) return out;
    } else if (ch === ",") key = "";
  }
  return null;
}
