// The real app's OpenAPI document lists every /v1 route kiln serves.
import { describe, expect, test } from "bun:test";
import { testKiln } from "../helpers/kiln.ts";

describe("OpenAPI document of the whole app", () => {
  const k = testKiln();

  test("every /v1 route is documented, with its method", async () => {
    const doc = (await (await k.req("/swagger/json", { key: null })).json()) as { paths: Record<string, Record<string, unknown>> };
    const served = k.routes.routes
      .filter((r) => r.path.startsWith("/v1/"))
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`)
      .sort();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
      .filter((s) => s.includes(" /v1/"))
      .sort();
    expect(served.length).toBeGreaterThanOrEqual(4);
    expect(documented).toEqual(served);
  });
});
