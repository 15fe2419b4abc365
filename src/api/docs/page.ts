// Pure renderers for the docs page: the HTML shell and the script that starts Swagger UI against kiln's own document.

/** Escapes text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The HTML page; every script, style and icon comes from `assetBase` on this server (no CDN). */
export function docsPage(opts: { title: string; version: string; assetBase: string }): string {
  const a = (name: string) => escapeHtml(`${opts.assetBase}/${name}`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)} ${escapeHtml(opts.version)}</title>
<link rel="icon" type="image/png" href="${a("favicon-32x32.png")}">
<link rel="stylesheet" href="${a("swagger-ui.css")}">
</head>
<body>
<div id="swagger-ui"></div>
<noscript>This page needs JavaScript. The OpenAPI document itself is plain JSON at the <code>json</code> path beside this page.</noscript>
<script src="${a("swagger-ui-bundle.js")}" charset="utf-8"></script>
<script src="${a("kiln-init.js")}" charset="utf-8"></script>
</body>
</html>
`;
}

/**
 * The start-up script, served as a file rather than inline so a strict Content-Security-Policy can allow it.
 * validatorUrl null: Swagger UI would otherwise load a badge image from validator.swagger.io.
 */
export function initScript(specUrl: string): string {
  const options = {
    url: specUrl,
    dom_id: "#swagger-ui",
    deepLinking: true,
    persistAuthorization: true,
    displayRequestDuration: true,
    validatorUrl: null,
  };
  return `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle(Object.assign(${JSON.stringify(options)}, {
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: "BaseLayout"
  }));
});
`;
}
