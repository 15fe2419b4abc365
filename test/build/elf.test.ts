// The ELF reader against the real libraries and addons in node_modules, and against bad input.
import { expect, test } from "bun:test";
import { join } from "node:path";
import { readDynamicInfo } from "../../build/compile/elf.ts";

const NM = join(import.meta.dir, "..", "..", "node_modules");
const read = async (...p: string[]) => readDynamicInfo(await Bun.file(join(NM, ...p)).bytes());

test("libonnxruntime.so.1: its SONAME, and only system libraries needed", async () => {
  const info = await read("onnxruntime-node", "bin", "napi-v6", "linux", "x64", "libonnxruntime.so.1");
  expect(info.soname).toBe("libonnxruntime.so.1");
  expect(info.needed).toContain("libstdc++.so.6");
  expect(info.needed).toContain("libc.so.6");
  expect(info.runpath).toEqual(["$ORIGIN"]);
});

test("the onnxruntime addon needs libonnxruntime.so.1 first", async () => {
  const info = await read("onnxruntime-node", "bin", "napi-v6", "linux", "x64", "onnxruntime_binding.node");
  expect(info.needed[0]).toBe("libonnxruntime.so.1");
  expect(info.runpath).toEqual(["$ORIGIN/"]);
});

test("sharp's addon needs the libvips-cpp it ships with, found through RPATH", async () => {
  const vips = await read("@img", "sharp-libvips-linux-x64", "lib", "libvips-cpp.so.8.18.7");
  const { readdirSync } = await import("node:fs");
  const addon = readdirSync(join(NM, "@img", "sharp-linux-x64", "lib")).find((f) => f.endsWith(".node"))!;
  const info = await read("@img", "sharp-linux-x64", "lib", addon);
  expect(info.needed).toContain(vips.soname!);
  expect(info.runpath[0]).toBe("$ORIGIN/../../sharp-libvips-linux-x64/lib");
});

test("rejects what is not a little-endian ELF64 file", () => {
  expect(() => readDynamicInfo(new TextEncoder().encode("#!/bin/sh\necho hi\n"))).toThrow("not an ELF file");
  const elf32 = new Uint8Array(64);
  elf32.set([0x7f, 0x45, 0x4c, 0x46, 1, 1]);
  expect(() => readDynamicInfo(elf32)).toThrow("not a little-endian ELF64 file");
});
