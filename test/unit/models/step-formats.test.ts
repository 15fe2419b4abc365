import { describe, expect, test } from "bun:test";
import { runsSmall, smallStepFormat, smallStepTokensFor } from "../../../src/models/step-formats.ts";
import { parseCpuInfo } from "../../../src/native/cpu.ts";

const cpu = (flags: string) => parseCpuInfo(`processor : 0\nmodel name : test\nflags : ${flags}\n`);

describe("small-step weight format", () => {
  test("follows the CPU: 3 tokens on AVX2 without VNNI, 1 with VNNI or AMX, none without AVX2", () => {
    expect(smallStepTokensFor(cpu("fma avx f16c avx2"))).toBe(3);
    expect(smallStepTokensFor(cpu("avx2 avx512f avx512bw avx512_vnni"))).toBe(1);
    expect(smallStepTokensFor(cpu("avx2 avx_vnni"))).toBe(1);
    expect(smallStepTokensFor(cpu("avx2 amx_int8"))).toBe(1);
    expect(smallStepTokensFor(cpu("sse4_2 avx"))).toBe(0);
  });

  test("q4 beside an int8 default only, and only when the folder has q4 and the limit is positive", () => {
    expect(smallStepFormat({ defaultDtype: "int8", dtypes: ["int8", "q4"] }, 3)).toEqual({ dtype: "q4", maxTokens: 3 });
    expect(smallStepFormat({ defaultDtype: "int8", dtypes: ["int8"] }, 3)).toBeUndefined();
    expect(smallStepFormat({ defaultDtype: "fp32", dtypes: ["fp32", "q4"] }, 3)).toBeUndefined();
    expect(smallStepFormat({ defaultDtype: "q4", dtypes: ["q4", "int8"] }, 3)).toBeUndefined();
    expect(smallStepFormat({ defaultDtype: "int8", dtypes: ["int8", "q4"] }, 0)).toBeUndefined();
  });

  test("a pass of rows × new tokens up to the limit runs on the small format, larger ones on the default", () => {
    const small = { dtype: "q4", maxTokens: 3 };
    expect(runsSmall(small, 1, 1)).toBe(true);
    expect(runsSmall(small, 3, 1)).toBe(true);
    expect(runsSmall(small, 1, 3)).toBe(true);
    expect(runsSmall(small, 4, 1)).toBe(false);
    expect(runsSmall(small, 1, 45)).toBe(false);
    expect(runsSmall(undefined, 1, 1)).toBe(false);
  });
});
