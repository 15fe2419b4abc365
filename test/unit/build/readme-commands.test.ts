import { describe, expect, test } from "bun:test";
import { readmeCommands, stripComment } from "../../build/readme-commands.ts";

describe("readmeCommands", () => {
  test("sh blocks, inline npm spans and table kiln spans; comments, prompts and continuations handled", () => {
    const md = [
      "Run `npm run bench` or `npm test`, not `bun x`.",
      "```sh",
      "npm start    # serves",
      "$ curl -s http://x \\",
      "  -H 'a: #b'",
      "",
      "npm start",
      "```",
      "```json",
      '{"not": "a command"}',
      "```",
      "| `kiln keys list` | lists |",
      "Prose about `kiln doctor` is not a table row.",
    ].join("\n");
    expect(readmeCommands(md)).toEqual(["npm start", "curl -s http://x -H 'a: #b'", "npm run bench", "npm test", "kiln keys list"]);
  });

  test("stripComment keeps # inside quotes and words", () => {
    expect(stripComment("echo 'a # b' # c")).toBe("echo 'a # b' ");
    expect(stripComment("curl x#y")).toBe("curl x#y");
  });
});
