import { expect, test } from "bun:test";
import { formatBytes } from "../../../src/errors/api-error.ts";

test("formatBytes names a size in the largest unit that divides it exactly", () => {
  expect([1024 ** 3, 2 * 1024 ** 3, 1024 ** 3 + 1024 ** 2, 50 * 1024 ** 2, 4096, 1000, 0].map(formatBytes)).toEqual([
    "1 GiB", "2 GiB", "1025 MiB", "50 MiB", "4 KiB", "1000 bytes", "0 bytes",
  ]);
});
