// Which device serves a model: the setting (server or kiln.json), the adapters and the probe, the folder's graphs.
import { describe, expect, test } from "bun:test";
import { type DeviceCandidate, DeviceError, needsProbe, placeModel, type WebgpuView } from "../../../src/devices/device-choice.ts";
import { probeReason } from "../../../src/devices/webgpu-probe.ts";

const text: DeviceCandidate = { id: "t-v1", device: null, defaultDtype: "fp32", dtypes: ["fp32", "q4f16"], kind: "text" };
const cpuOnly: DeviceCandidate = { ...text, id: "c-v1", dtypes: ["fp32", "int8"] };
const media: DeviceCandidate = { ...text, id: "m-v1", kind: "media" };
const image: DeviceCandidate = { ...text, id: "i-v1", dtypes: ["fp32"], kind: "image" };
const gpu = { name: "NVIDIA L4", software: false };
const lavapipe = { name: "llvmpipe (LLVM 15.0.6, 256 bits)", software: true };
const works = (adapters = [gpu]): WebgpuView => ({ adapters, probe: { ok: true, ms: 200 } });
const broken: WebgpuView = { adapters: [gpu], probe: { ok: false, error: "no WebGPU adapter (No supported adapters)" } };
const none: WebgpuView = { adapters: [], adaptersError: "libvulkan.so.1 not found", probe: null };

describe("placeModel", () => {
  test("cpu is the cpu, whatever the machine", () => {
    expect(placeModel(text, "cpu", works())).toMatchObject({ device: "cpu", dtype: "fp32" });
  });

  test("auto takes a hardware adapter that passed the probe, with the folder's GPU format", () => {
    expect(placeModel(text, "auto", works())).toEqual({ device: "webgpu", dtype: "q4f16", reason: "auto: the webgpu probe passed on NVIDIA L4" });
    expect(placeModel({ ...text, dtypes: ["fp32", "fp16"] }, "auto", works()).dtype).toBe("fp16");
    expect(placeModel(image, "auto", works())).toMatchObject({ device: "webgpu", dtype: "fp32" });
  });

  test("auto keeps the CPU, saying why: a software adapter, a failed probe, no driver, no GPU graph, a media model", () => {
    expect(placeModel(text, "auto", works([lavapipe])).reason).toContain("software one (llvmpipe");
    expect(placeModel(text, "auto", broken)).toMatchObject({ device: "cpu", reason: "auto: the webgpu probe failed: no WebGPU adapter (No supported adapters)" });
    expect(placeModel(text, "auto", none)).toMatchObject({ device: "cpu", reason: "auto: libvulkan.so.1 not found" });
    expect(placeModel(cpuOnly, "auto", works())).toMatchObject({ device: "cpu", dtype: "fp32" });
    expect(placeModel(cpuOnly, "auto", works()).reason).toContain("no q4f16 or fp16 graph");
    expect(placeModel(media, "auto", works()).reason).toContain("media decoder has no webgpu path");
  });

  test("webgpu runs on a software adapter too (it was asked for)", () => {
    expect(placeModel(text, "webgpu", works([lavapipe]))).toMatchObject({ device: "webgpu", dtype: "q4f16", reason: "KILN_DEVICE says webgpu" });
  });

  test("webgpu that cannot work stops start-up, naming why", () => {
    expect(() => placeModel(text, "webgpu", broken)).toThrow(new DeviceError("device webgpu (KILN_DEVICE) cannot work here: the webgpu probe failed: no WebGPU adapter (No supported adapters)"));
    expect(() => placeModel(text, "webgpu", none)).toThrow("cannot work here: libvulkan.so.1 not found");
  });

  test("server-wide webgpu keeps a model without a GPU path on the CPU; the model's own kiln.json asking for it stops", () => {
    expect(placeModel(cpuOnly, "webgpu", works())).toMatchObject({ device: "cpu", dtype: "fp32" });
    expect(placeModel(media, "webgpu", works()).reason).toContain("webgpu asked, but its media decoder");
    expect(() => placeModel({ ...cpuOnly, device: "webgpu" }, "cpu", works())).toThrow("model c-v1: device webgpu (kiln.json of c-v1) cannot work");
  });

  test("kiln.json's device wins over the server's", () => {
    expect(placeModel({ ...text, device: "cpu" }, "webgpu", works()).device).toBe("cpu");
    expect(placeModel({ ...text, device: "webgpu" }, "cpu", works())).toMatchObject({ device: "webgpu", reason: "kiln.json of t-v1 says webgpu" });
  });
});

describe("needsProbe", () => {
  test("only when some model may go to the GPU: explicit webgpu, or auto with a hardware adapter and a GPU graph", () => {
    expect(needsProbe([text], "cpu", [gpu])).toBe(false);
    expect(needsProbe([text], "webgpu", [])).toBe(true);
    expect(needsProbe([text], "auto", [lavapipe])).toBe(false);
    expect(needsProbe([text], "auto", [gpu])).toBe(true);
    expect(needsProbe([cpuOnly, media], "auto", [gpu])).toBe(false);
    expect(needsProbe([{ ...text, device: "webgpu" }], "cpu", [])).toBe(true);
  });
});

describe("probeReason", () => {
  test("ONNX Runtime's adapter failure becomes one short reason", () => {
    const raw = "/onnxruntime_src/onnxruntime/core/providers/webgpu/webgpu_context.cc:136 void onnxruntime::webgpu::WebGpuContext::Initialize(...) [ONNXRuntimeError] : 1 : FAIL : Failed to get a WebGPU adapter: No supported adapters";
    expect(probeReason(raw)).toBe("no WebGPU adapter (No supported adapters)");
    expect(probeReason("something\n  else went wrong")).toBe("something else went wrong");
    expect(probeReason("x".repeat(300))).toHaveLength(201);
  });
});
