// unpackFile: written once, reused while the size matches, replaced when it does not, never left half-written.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { unpackFile } from "../../../src/native/unpack.ts";
import { tempDir } from "../../helpers/kiln.ts";

function setup() {
  const dir = tempDir("kiln-unpack-");
  const source = join(dir, "source.bin");
  const bytes = new Uint8Array(300_000).map((_, i) => (i * 31) & 0xff);
  writeFileSync(source, bytes);
  const out = join(dir, "out");
  Bun.spawnSync(["mkdir", out]);
  return { source, out, bytes };
}

describe("unpackFile", () => {
  test("copies the bytes under the given name, executable, with no temp file left", () => {
    const { source, out, bytes } = setup();
    const r = unpackFile(source, out, "libx.so.1");
    expect(r).toEqual({ path: join(out, "libx.so.1"), written: true });
    expect(new Uint8Array(readFileSync(r.path))).toEqual(bytes);
    expect(statSync(r.path).mode & 0o100).toBe(0o100);
    expect(readdirSync(out)).toEqual(["libx.so.1"]);
  });

  test("reuses an existing copy of the same size", () => {
    const { source, out } = setup();
    unpackFile(source, out, "libx.so.1");
    const before = statSync(join(out, "libx.so.1")).mtimeMs;
    expect(unpackFile(source, out, "libx.so.1").written).toBe(false);
    expect(statSync(join(out, "libx.so.1")).mtimeMs).toBe(before);
  });

  test("replaces a copy of the wrong size (say, truncated by a full disk)", () => {
    const { source, out, bytes } = setup();
    writeFileSync(join(out, "libx.so.1"), "short");
    expect(unpackFile(source, out, "libx.so.1").written).toBe(true);
    expect(new Uint8Array(readFileSync(join(out, "libx.so.1")))).toEqual(bytes);
  });

  test("throws when the folder is missing, leaving nothing behind", () => {
    const { source, out } = setup();
    expect(() => unpackFile(source, join(out, "missing"), "libx.so.1")).toThrow();
    expect(readdirSync(out)).toEqual([]);
  });
});
