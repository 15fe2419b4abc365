// nodePlacement reads a real WebGPU profile (the CPU-format graph, whose Attention falls back to the CPU) and names the fallbacks.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DEVICE_COMPUTE_OPS, nodePlacement, nodesOffDevice, WEBGPU_PROVIDER } from "../../../src/modelgen/node-placement.ts";

// Trimmed from onnxruntime-node 1.30's profile of model_q4.onnx (the tiny preset) run once on the webgpu EP: one kernel
// event per op and provider, a few WebGPU dispatch ("Api") events and the session events.
const fixture = readFileSync(join(import.meta.dir, "fixtures", "webgpu-profile-cpu-graph.json"), "utf8");

describe("nodePlacement", () => {
  test("groups the kernel events by op and provider, ignoring session and GPU dispatch events", () => {
    const p = nodePlacement(fixture);
    expect(p.nodes.length).toBe(27);
    expect(p.byOp.Attention).toEqual({ CPUExecutionProvider: 1 });
    expect(p.byOp.MatMulNBits).toEqual({ [WEBGPU_PROVIDER]: 1 });
    expect(p.byOp.Shape).toEqual({ CPUExecutionProvider: 1, [WEBGPU_PROVIDER]: 1 });
    expect(p.nodes.find((n) => n.op === "RotaryEmbedding")).toEqual({ node: "/RotaryEmbedding_24", op: "RotaryEmbedding", provider: WEBGPU_PROVIDER });
    // The dispatch events are named "/Gather_20&Gather&Gather" and the like: none becomes a node.
    expect(p.nodes.filter((n) => n.node.includes("&"))).toEqual([]);
  });

  test("nodesOffDevice names the compute nodes that left the GPU, and nothing else", () => {
    const off = nodesOffDevice(nodePlacement(fixture));
    // The CPU graph's norms, rotary and MatMulNBits already run on the GPU; its opset-23 Attention does not.
    expect(off.map((n) => n.op)).toEqual(["Attention"]);
    expect(nodesOffDevice(nodePlacement(fixture), DEVICE_COMPUTE_OPS.filter((op) => op !== "Attention"))).toEqual([]);
  });

  test("a node seen on several steps counts once; parsed arrays work as the text does", () => {
    const events = JSON.parse(fixture) as unknown[];
    const twice = nodePlacement([...events, ...events]);
    expect(twice.nodes.length).toBe(27);
    expect(twice).toEqual(nodePlacement(events));
  });

  test("a node that ran on the CPU once is reported as off the device even if it also ran on the GPU", () => {
    const ev = (provider: string) => ({ cat: "Node", name: "/MatMul_7_kernel_time", args: { op_name: "MatMul", provider } });
    expect(nodesOffDevice(nodePlacement([ev(WEBGPU_PROVIDER), ev("CPUExecutionProvider")]))).toEqual([{ node: "/MatMul_7", op: "MatMul", provider: "CPUExecutionProvider" }]);
    expect(() => nodePlacement('{"traceEvents": []}')).toThrow("JSON array");
  });
});
