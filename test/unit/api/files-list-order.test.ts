// listOrder: the order GET /v1/files lists in; anything but asc or desc (even empty, or another case) is refused.
import { expect, test } from "bun:test";
import { listOrder } from "../../../src/api/files/service.ts";

test("none is desc; asc and desc are themselves; anything else is null (the text/plain 400)", () => {
  expect([undefined, "asc", "desc", "sideways", "", "ASC", " asc"].map(listOrder)).toEqual(["desc", "asc", "desc", null, null, null, null]);
});
