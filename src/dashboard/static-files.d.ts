// Types for the files the dashboard imports with `{ type: "file" }`: Bun turns each into its path (embedded when compiled).
declare module "uplot/dist/uPlot.iife.min.js" {
  const path: string;
  export default path;
}
declare module "uplot/dist/uPlot.min.css" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*.svg" {
  const path: string;
  export default path;
}
