// Whether a decoder graph attends through ONNX Runtime's GroupQueryAttention, read from its file's node list (its
// tensors are skipped by offset, so a graph of any size with its weights inline is read in a few small reads).
// That op takes each row's cache from column 0 up to the row's own length: rows are right-padded, never left-padded.
import { type Field, MalformedProto, ProtoSource } from "./onnx-fields.ts";

/** Whether a node of `graph` (a GraphProto's range), or of any subgraph of its nodes, is com.microsoft's GroupQueryAttention. */
function graphHasGqa(src: ProtoSource, graph: Field): boolean {
  for (const f of src.fields(graph.start, graph.end)) if (f.num === 1 && f.wire === 2 && nodeHasGqa(src, f)) return true;
  return false;
}

function nodeHasGqa(src: ProtoSource, node: Field): boolean {
  let opType = "", domain = "";
  for (const f of src.fields(node.start, node.end)) {
    if (f.wire !== 2) continue;
    if (f.num === 4) opType = src.string(f);
    else if (f.num === 7) domain = src.string(f);
    // An attribute's subgraphs (If and Loop bodies: field 6 g, field 11 graphs).
    else if (f.num === 5) for (const a of src.fields(f.start, f.end)) if ((a.num === 6 || a.num === 11) && a.wire === 2 && graphHasGqa(src, a)) return true;
  }
  return opType === "GroupQueryAttention" && domain === "com.microsoft";
}

/** Whether the ONNX model in `src` (a ModelProto) has a GroupQueryAttention node. */
export function hasGroupQueryAttention(src: ProtoSource): boolean {
  for (const f of src.fields()) if (f.num === 7 && f.wire === 2 && graphHasGqa(src, f)) return true;
  return false;
}

/** hasGroupQueryAttention of a graph file; a file that is no well-formed ONNX model has none (its load fails anyway). */
export function graphUsesGroupQueryAttention(path: string): boolean {
  try {
    return ProtoSource.withFile(path, hasGroupQueryAttention);
  } catch (e) {
    if (e instanceof MalformedProto) return false;
    throw e;
  }
}
