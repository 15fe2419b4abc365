import { describe, expect, test } from "bun:test";
import { GGUF_ENV, GGUF_SCENARIO, parseBenchArgs, SCENARIOS } from "../../../build/bench-args.mjs";

describe("parseBenchArgs", () => {
  test("no flags: the throughput bench; --profile becomes its variable; unknown arguments pass on to bun test", () => {
    expect(parseBenchArgs([])).toEqual({ env: {}, file: "./test/load/chat.load.ts", rest: [] });
    expect(parseBenchArgs(["--profile", "-t", "x"])).toEqual({ env: { KILN_BENCH_PROFILE: "1" }, file: "./test/load/chat.load.ts", rest: ["-t", "x"] });
    expect(parseBenchArgs(["--prefix"])).toEqual({ env: {}, file: SCENARIOS["--prefix"]!, rest: [] });
    expect(parseBenchArgs(["--batch"])).toEqual({ env: {}, file: "./test/load/batch.load.ts", rest: [] });
  });

  test("--gguf takes a value, repeated, comma-separated or as --gguf=, and picks the GGUF scenario", () => {
    expect(parseBenchArgs(["--gguf", "a.gguf"])).toEqual({ env: { [GGUF_ENV]: "a.gguf" }, file: GGUF_SCENARIO, rest: [] });
    expect(parseBenchArgs(["--gguf", "bench-q4_k_m,bench-q8_0", "--gguf=/m/x.gguf", "--gguf", "1b-q4_k_m"])).toEqual({
      env: { [GGUF_ENV]: "bench-q4_k_m,bench-q8_0,/m/x.gguf,1b-q4_k_m" }, file: GGUF_SCENARIO, rest: [],
    });
  });

  test("--gguf without a value, or beside another scenario, is an error", () => {
    expect(parseBenchArgs(["--gguf"])).toEqual({ error: expect.stringContaining("--gguf needs a file") });
    expect(parseBenchArgs(["--gguf", "--profile"])).toEqual({ error: expect.stringContaining("--gguf needs a file") });
    expect(parseBenchArgs(["--gguf="])).toEqual({ error: expect.stringContaining("--gguf needs a file") });
    expect(parseBenchArgs(["--prefix", "--gguf", "a.gguf"])).toEqual({ error: expect.stringContaining("scenario of its own") });
    expect(parseBenchArgs(["--gguf", "a.gguf", "--cluster"])).toEqual({ error: expect.stringContaining("scenario of its own") });
  });
});
