// Walks JSON text (whole, cut short or malformed) outside its strings, for code that completes or balances what a
// model wrote: a quote or bracket inside a string, or escaped in one, is text, not structure.

/** Calls `visit` with each character outside strings (quotes excluded); true when the text ends inside a string. */
export function scanOutsideStrings(text: string, visit: (ch: string) => void): boolean {
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else visit(ch);
  }
  return inString;
}
