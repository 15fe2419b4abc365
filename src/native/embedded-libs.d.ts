// Types for the native libraries imported with `{ type: "file" }`: Bun turns each into its path (embedded when compiled).
declare module "@img/sharp-libvips-linux-x64/binary" {
  const path: string;
  export default path;
}
declare module "onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1" {
  const path: string;
  export default path;
}
