// scanOutsideStrings: what it shows of JSON text is its structure, never the text of a string.
import { expect, test } from "bun:test";
import { scanOutsideStrings } from "../../../src/inference/json-scan.ts";

function scan(text: string): { seen: string; inString: boolean } {
  let seen = "";
  const inString = scanOutsideStrings(text, (ch) => (seen += ch));
  return { seen, inString };
}

test("brackets and quotes inside strings, escaped quotes among them, are not structure", () => {
  expect(scan('{"a": "x}\\"]{", "b": [1, {}]}')).toEqual({ seen: "{: , : [1, {}]}", inString: false });
});

test("a text cut inside a string, or right after a backslash in one, ends in the string", () => {
  expect(scan('{"a": "un')).toEqual({ seen: "{: ", inString: true });
  expect(scan('{"a": "x\\')).toEqual({ seen: "{: ", inString: true });
  expect(scan('{"a": "x\\"')).toEqual({ seen: "{: ", inString: true });
});

test("text with no strings is all structure", () => {
  expect(scan("[1, 2]}")).toEqual({ seen: "[1, 2]}", inString: false });
  expect(scan("")).toEqual({ seen: "", inString: false });
});
