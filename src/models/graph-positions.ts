// How many positions a decoder graph holds, read from its file: the bound kiln's builder states in the model's metadata,
// or the rows of a rotary cos cache stored in the graph (position_ids index it, so a position past it fails mid-run).
import { POSITIONS_KEY as METADATA_KEY } from "../modelgen/rotary.ts";
import { type Field, MalformedProto, ProtoSource } from "./onnx-fields.ts";

export interface PositionsBound {
  positions: number;
  /** Where the bound comes from, as a clause: "its metadata's max_position_embeddings is 131072". */
  source: string;
}

/** Which input of each rotary-cache op is its cos cache ([positions, D/2] when it is a table). */
function cosCacheInput(opType: string, domain: string, inputs: string[]): string | undefined {
  if (opType === "RotaryEmbedding") return domain === "com.microsoft" ? inputs[2] : inputs[3] ? inputs[1] : undefined;
  if (opType === "GroupQueryAttention" && domain === "com.microsoft") return inputs[7];
  return undefined;
}

interface GraphScan {
  caches: Set<string>;
  /** Initializer name → dims, over the graph and its subgraphs. */
  dims: Map<string, number[]>;
}

function scanGraph(src: ProtoSource, graph: Field, scan: GraphScan): void {
  for (const f of src.fields(graph.start, graph.end)) {
    if (f.num === 1 && f.wire === 2) scanNode(src, f, scan);
    if (f.num === 5 && f.wire === 2) {
      let name = "";
      const dims: number[] = [];
      for (const t of src.fields(f.start, f.end)) {
        if (t.num === 8 && t.wire === 2) name = src.string(t);
        else if (t.num === 1) dims.push(...(t.wire === 2 ? src.packed(t) : [t.value]));
      }
      scan.dims.set(name, dims);
    }
  }
}

function scanNode(src: ProtoSource, node: Field, scan: GraphScan): void {
  const inputs: string[] = [];
  let opType = "", domain = "";
  for (const f of src.fields(node.start, node.end)) {
    if (f.wire !== 2) continue;
    if (f.num === 1) inputs.push(src.string(f));
    else if (f.num === 4) opType = src.string(f);
    else if (f.num === 7) domain = src.string(f);
    // An attribute's subgraphs (If and Loop bodies: field 6 g, field 11 graphs) hold nodes too.
    else if (f.num === 5) for (const a of src.fields(f.start, f.end)) if ((a.num === 6 || a.num === 11) && a.wire === 2) scanGraph(src, a, scan);
  }
  const cache = cosCacheInput(opType, domain, inputs);
  if (cache) scan.caches.add(cache);
}

/** The fewest positions the model in `src` (an ONNX ModelProto) holds, or null when it states no bound. */
export function positionsBound(src: ProtoSource): PositionsBound | null {
  const bounds: PositionsBound[] = [];
  const scan: GraphScan = { caches: new Set(), dims: new Map() };
  for (const f of src.fields()) {
    if (f.num === 7 && f.wire === 2) scanGraph(src, f, scan);
    if (f.num === 14 && f.wire === 2) {
      const entry = src.fields(f.start, f.end);
      const key = entry.find((e) => e.num === 1), value = entry.find((e) => e.num === 2);
      if (!key || !value || src.string(key) !== METADATA_KEY) continue;
      const positions = Number(src.string(value));
      if (Number.isInteger(positions) && positions > 0) bounds.push({ positions, source: `its metadata's ${METADATA_KEY} is ${positions}` });
    }
  }
  for (const name of scan.caches) {
    const rows = scan.dims.get(name)?.[0];
    if (rows !== undefined && rows > 0) bounds.push({ positions: rows, source: `its rotary cos cache "${name}" has ${rows} rows` });
  }
  return bounds.reduce<PositionsBound | null>((low, b) => (low === null || b.positions < low.positions ? b : low), null);
}

/**
 * positionsBound of a graph file, read without loading its tensors. A file that is no well-formed ONNX model states no
 * bound: loading it fails anyway, and the worker's load reports why.
 */
export function graphPositions(path: string): PositionsBound | null {
  try {
    return ProtoSource.withFile(path, positionsBound);
  } catch (e) {
    if (e instanceof MalformedProto) return null;
    throw e;
  }
}

/** Why a manifest's context length cannot be served by a graph (`file`, as the folder names it), or null. */
export function contextProblem(contextLength: number, field: string, bound: PositionsBound | null, file: string): string | null {
  if (bound === null || contextLength <= bound.positions) return null;
  return `${field} ${contextLength} is more than ${file} holds (${bound.source}): set ${field} to ${bound.positions} or less`;
}
