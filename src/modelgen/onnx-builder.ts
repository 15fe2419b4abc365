// A small ONNX graph builder: nodes with auto-named outputs, deduplicated constants, external initializers.
import {
  AttributeType,
  DataType,
  encodeModel,
  EXTERNAL,
  type AttributeProto,
  type ModelProto,
  type NodeProto,
  type TensorProto,
  type ValueInfoProto,
} from "./onnx-proto.ts";

export const T = DataType;

export type Attr =
  | { kind: "int"; v: number }
  | { kind: "float"; v: number }
  | { kind: "ints"; v: number[] };
export const int = (v: number): Attr => ({ kind: "int", v });
export const float = (v: number): Attr => ({ kind: "float", v });
export const ints = (v: number[]): Attr => ({ kind: "ints", v });

export type Dim = number | string;

/** Where an initializer's bytes live inside the external data file. */
export interface ExternalTensor {
  name: string;
  dataType: number;
  dims: number[];
  offset: number;
  length: number;
}

/** The names of the builder's own shared constants (`/const_N`); weights never start with it. */
export const CONSTANT_PREFIX = "/const_";

function toAttribute(name: string, a: Attr): AttributeProto {
  if (a.kind === "int") return { name, type: AttributeType.INT, i: a.v };
  if (a.kind === "float") return { name, type: AttributeType.FLOAT, f: a.v };
  return { name, type: AttributeType.INTS, ints: a.v };
}

export class GraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: TensorProto[] = [];
  readonly inputs: ValueInfoProto[] = [];
  readonly outputs: ValueInfoProto[] = [];
  /** The model's metadata_props, written in insertion order. */
  readonly metadata = new Map<string, string>();
  private counter = 0;
  private constants = new Map<string, string>();

  input(name: string, elemType: number, dims: Dim[]): string {
    this.inputs.push({ name, elemType, dims });
    return name;
  }

  output(name: string, elemType: number, dims: Dim[]): void {
    this.outputs.push({ name, elemType, dims });
  }

  /** Adds a node and returns its output names (`outputs` fixes names, e.g. graph outputs). */
  nodeN(
    opType: string,
    inputs: string[],
    attrs: Record<string, Attr> = {},
    opts: { domain?: string; outputs?: string[]; count?: number } = {},
  ): string[] {
    const id = this.counter++;
    const outs = opts.outputs ?? Array.from({ length: opts.count ?? 1 }, (_, i) => `/${opType}_${id}/out${i}`);
    this.nodes.push({
      name: `/${opType}_${id}`,
      opType,
      domain: opts.domain ?? "",
      input: inputs,
      output: outs,
      attribute: Object.entries(attrs).map(([k, a]) => toAttribute(k, a)),
    });
    return outs;
  }

  node(opType: string, inputs: string[], attrs: Record<string, Attr> = {}, opts: { domain?: string; output?: string } = {}): string {
    return this.nodeN(opType, inputs, attrs, { domain: opts.domain, outputs: opts.output ? [opts.output] : undefined })[0]!;
  }

  /** An int64 constant (scalar when dims is []), stored inline and shared between uses. */
  int64(values: (number | bigint)[], dims: number[] = [values.length]): string {
    const key = `i64:${dims.join("x")}:${values.join(",")}`;
    return this.constant(key, T.INT64, dims, new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer));
  }

  /** A float constant; small ones are shared between uses, large ones are not compared. */
  float32(values: number[] | Float32Array, dims: number[] = [values.length]): string {
    const data = Float32Array.from(values);
    const key = data.length <= 64 ? `f32:${dims.join("x")}:${Array.from(data).join(",")}` : `f32#${this.counter++}`;
    return this.constant(key, T.FLOAT, dims, new Uint8Array(data.buffer));
  }

  /** A small float64 constant, shared between uses (the rotary frequencies, computed in double like the tables were). */
  float64(values: number[], dims: number[] = [values.length]): string {
    const data = Float64Array.from(values);
    return this.constant(`f64:${dims.join("x")}:${values.join(",")}`, T.DOUBLE, dims, new Uint8Array(data.buffer));
  }

  private constant(key: string, dataType: number, dims: number[], raw: Uint8Array): string {
    const hit = this.constants.get(key);
    if (hit) return hit;
    const name = `${CONSTANT_PREFIX}${this.constants.size}`;
    this.constants.set(key, name);
    this.initializers.push({ name, dataType, dims, rawData: raw });
    return name;
  }

  /** A named initializer stored inline in the graph file (small weights). */
  inline(name: string, dataType: number, dims: number[], raw: Uint8Array): void {
    this.initializers.push({ name, dataType, dims, rawData: raw });
  }

  /** A named initializer whose bytes live in `location` (the data file beside the graph). */
  external(t: ExternalTensor, location: string): void {
    this.initializers.push({
      name: t.name,
      dataType: t.dataType,
      dims: t.dims,
      dataLocation: EXTERNAL,
      externalData: [
        { key: "location", value: location },
        { key: "offset", value: String(t.offset) },
        { key: "length", value: String(t.length) },
      ],
    });
  }

  /** The model: IR 10, opset 23 (Attention with grouped KV heads) plus com.microsoft 1 (MatMulNBits, RotaryEmbedding…). */
  model(graphName: string): ModelProto {
    return {
      irVersion: 10,
      producerName: "kiln",
      producerVersion: "1",
      opsetImport: [
        { domain: "", version: 23 },
        { domain: "com.microsoft", version: 1 },
      ],
      graph: { name: graphName, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
      metadataProps: [...this.metadata].map(([key, value]) => ({ key, value })),
    };
  }

  encode(graphName: string): Uint8Array {
    return encodeModel(this.model(graphName));
  }
}
