// A vector as the format returns it: a JSON array of numbers, or (encoding_format base64) the base64 of its
// little-endian float32 bytes, which the official clients decode back to the same floats.

/** base64 of the vector's float32 values, little-endian whatever the machine's order. */
export function float32Base64(v: Float32Array): string {
  const bytes = new Uint8Array(v.length * 4);
  const view = new DataView(bytes.buffer);
  v.forEach((x, i) => view.setFloat32(i * 4, x, true));
  return Buffer.from(bytes).toString("base64");
}

/** The vector in the encoding asked for. */
export function encodeVector(v: Float32Array, format: "float" | "base64"): number[] | string {
  return format === "base64" ? float32Base64(v) : Array.from(v);
}
