// Type of `import path from "./static/dashboard.js" with { type: "file" }`: the browser script is served as a file, never imported as code.
declare const path: string;
export default path;
