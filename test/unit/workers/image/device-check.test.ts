// The diffusion pipeline's device proof: which nodes refuse a graph, the warm-up's size, and that the warm-up calls every graph once.
import { describe, expect, test } from "bun:test";
import { nodePlacement, WEBGPU_PROVIDER } from "../../../../src/modelgen/node-placement.ts";
import { describePipeline, offDeviceProblem, warmUp, warmUpSize } from "../../../../workers/image/device-check.ts";
import { fakeModel } from "./fake-diffusion.ts";

const CPU = "CPUExecutionProvider";
/** A profile's kernel events: one per [node, op, provider]. */
const placement = (nodes: [string, string, string][]) => nodePlacement(nodes.map(([node, op, provider]) => ({ cat: "Node", name: `${node}_kernel_time`, args: { op_name: op, provider } })));

describe("offDeviceProblem", () => {
  test("a convolution, matmul or gemm on the CPU refuses the graph, naming the nodes", () => {
    const p = placement([["/conv_in/Conv", "Conv", CPU], ["/proj/MatMul", "MatMul", CPU], ["/time/Gemm", "Gemm", CPU], ["/up/Conv", "Conv", WEBGPU_PROVIDER]]);
    expect(offDeviceProblem("unet", p)).toBe("unet runs 3 of its compute nodes off the GPU: /conv_in/Conv (Conv on CPUExecutionProvider), /proj/MatMul (MatMul on CPUExecutionProvider), /time/Gemm (Gemm on CPUExecutionProvider)");
  });

  test("more than four are cut short", () => {
    const p = placement(Array.from({ length: 6 }, (_, i): [string, string, string] => [`/c${i}`, "Conv", CPU]));
    expect(offDeviceProblem("vae_decoder", p)).toEndWith("/c3 (Conv on CPUExecutionProvider), …");
  });

  test("shape arithmetic, the timestep's sin/cos and ONNX's own Attention (no webgpu kernel) on the CPU pass", () => {
    const p = placement([["/g", "Gather", CPU], ["/sin", "Sin", CPU], ["/attn1/Attention", "Attention", CPU], ["/c", "Conv", WEBGPU_PROVIDER], ["/m", "MatMul", WEBGPU_PROVIDER]]);
    expect(offDeviceProblem("unet", p)).toBeNull();
  });

  test("the report line names each graph's providers", () => {
    const p = placement([["/c", "Conv", WEBGPU_PROVIDER], ["/g", "Gather", CPU]]);
    expect(describePipeline([["unet", p], ["vae_decoder", p]])).toBe(`unet: ${WEBGPU_PROVIDER}: 1 Conv; ${CPU}: 1 Gather | vae_decoder: ${WEBGPU_PROVIDER}: 1 Conv; ${CPU}: 1 Gather`);
  });
});

describe("warm-up", () => {
  test("at the first size served, else the graphs' fixed size, else the smallest the model takes", () => {
    const { model } = fakeModel();
    expect(warmUpSize(model, [{ width: 256, height: 128 }, { width: 128, height: 128 }])).toEqual({ width: 256, height: 128 });
    expect(warmUpSize(model, [])).toEqual({ width: 8, height: 8 });
    expect(warmUpSize(fakeModel({ height: 12, width: 10 }).model, [])).toEqual({ width: 80, height: 96 });
  });

  test("runs the text encoder, UNet, decoder and encoder once each at the size", async () => {
    const { model, controls } = fakeModel();
    await warmUp(model, { width: 64, height: 32 }, 77);
    // The fake text encoder fixes 4 positions, which win over the served length.
    expect(controls.calls.map((c) => [c.graph, c.dims])).toEqual([
      ["text", [1, 4]],
      ["unet", [1, 4, 4, 8]],
      ["decoder", [1, 4, 4, 8]],
      ["encoder", [1, 3, 32, 64]],
    ]);
  });

  test("a folder without a VAE encoder warms up the rest", async () => {
    const { model, controls } = fakeModel();
    await warmUp({ ...model, encoder: null }, { width: 16, height: 16 }, 77);
    expect(controls.calls.map((c) => c.graph)).toEqual(["text", "unet", "decoder"]);
  });
});
