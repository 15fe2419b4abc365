// Metric route labels are the router's patterns, never raw paths.
import { expect, test } from "bun:test";
import { routeLabeler, UNMATCHED } from "../../../src/http/route-label.ts";

test("a concrete path maps to its route pattern; unknown paths and methods to one label", () => {
  const label = routeLabeler([
    { method: "GET", path: "/v1/models" },
    { method: "GET", path: "/v1/models/:model" },
    { method: "POST", path: "/v1/chat/completions" },
    { method: "GET", path: "/swagger/*" },
  ]);
  expect(label("GET", "/v1/models")).toBe("/v1/models");
  expect(label("GET", "/v1/models/kiln-tiny-v1")).toBe("/v1/models/:model");
  expect(label("HEAD", "/v1/models/other-model/")).toBe("/v1/models/:model");
  expect(label("POST", "/v1/chat/completions")).toBe("/v1/chat/completions");
  expect(label("GET", "/swagger/assets/x.js")).toBe("/swagger/*");
  expect(label("DELETE", "/v1/chat/completions")).toBe(UNMATCHED);
  expect(label("GET", "/v1/models/a/b")).toBe(UNMATCHED);
  expect(label("GET", "/wp-login.php")).toBe(UNMATCHED);
  expect(label("GET", null)).toBe(UNMATCHED);
});
