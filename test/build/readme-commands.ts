// The commands a README shows: lines of its sh blocks, inline `npm …` spans, and the `kiln …` spans of its tables.

/** Each command once, in order of appearance; comments and prompts stripped, backslash continuations joined. */
export function readmeCommands(markdown: string): string[] {
  const found: string[] = [];
  const add = (c: string) => {
    const t = c.trim();
    if (t && !found.includes(t)) found.push(t);
  };
  const blocks = markdown.matchAll(/^```(?:sh|bash|shell)\n([\s\S]*?)^```$/gm);
  for (const [, body] of blocks) {
    const joined = body!.replace(/\s*\\\n\s*/g, " ");
    for (const line of joined.split("\n")) add(stripComment(line).replace(/^\$ /, ""));
  }
  const prose = markdown.replace(/^```[\s\S]*?^```$/gm, "");
  for (const [, raw] of prose.matchAll(/`([^`\n]+)`/g)) {
    if (/^npm (start|test|run )/.test(raw!)) add(raw!);
    // In a table cell a literal | is written \|.
    else if (/^kiln( |$)/.test(raw!) && /^\|/m.test(lineOf(prose, raw!))) add(raw!.replace(/\\\|/g, "|"));
  }
  return found;
}

/** Drops a trailing `# comment` that is outside quotes. */
export function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "#" && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

function lineOf(text: string, span: string): string {
  const i = text.indexOf(`\`${span}\``);
  return text.slice(text.lastIndexOf("\n", i) + 1, i + 1);
}
