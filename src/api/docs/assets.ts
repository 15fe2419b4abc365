// The docs UI's static files: swagger-ui-dist files embedded in the executable, plus kiln's own start-up script.
import bundlePath from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import cssPath from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import faviconPath from "swagger-ui-dist/favicon-32x32.png" with { type: "file" };
import { initScript } from "./page.ts";

export interface DocsAsset {
  contentType: string;
  /** The bytes: read from disk (or the executable's embedded files) on first use, then kept. */
  load(): Promise<Uint8Array<ArrayBuffer>>;
}

function embedded(path: string, contentType: string): DocsAsset {
  let bytes: Promise<Uint8Array<ArrayBuffer>> | undefined;
  return { contentType, load: () => (bytes ??= Bun.file(path).bytes()) };
}

function generated(text: string, contentType: string): DocsAsset {
  const bytes = new TextEncoder().encode(text);
  return { contentType, load: async () => bytes };
}

/** Asset file name (as served under `<base>/assets/`) → asset. */
export function docsAssets(specUrl: string): Map<string, DocsAsset> {
  return new Map([
    ["swagger-ui-bundle.js", embedded(bundlePath, "text/javascript; charset=utf-8")],
    ["swagger-ui.css", embedded(cssPath, "text/css; charset=utf-8")],
    ["favicon-32x32.png", embedded(faviconPath, "image/png")],
    ["kiln-init.js", generated(initScript(specUrl), "text/javascript; charset=utf-8")],
  ]);
}
