// Types for the swagger-ui-dist files imported with `{ type: "file" }`: Bun turns each into its path (embedded when compiled).
declare module "swagger-ui-dist/swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/swagger-ui.css" {
  const path: string;
  export default path;
}
declare module "swagger-ui-dist/favicon-32x32.png" {
  const path: string;
  export default path;
}
