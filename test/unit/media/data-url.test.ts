import { describe, expect, test } from "bun:test";
import { parseDataUrl, sourceFromFileData, sourceFromUrl } from "../../../src/media/data-url.ts";

describe("data URLs", () => {
  test("base64 and percent-encoded payloads, the type lower-cased and its parameters dropped", () => {
    expect(parseDataUrl("data:image/PNG;base64,iVBO")).toEqual({ mediaType: "image/png", base64: "iVBO" });
    expect(parseDataUrl("data:text/plain;charset=utf-8,hi%20there")).toEqual({ mediaType: "text/plain", base64: Buffer.from("hi there").toString("base64") });
    // RFC 2397: no type means text/plain.
    expect(parseDataUrl("data:,x")).toEqual({ mediaType: "text/plain", base64: "eA==" });
    expect(parseDataUrl("data:;base64,eA==")).toEqual({ mediaType: "text/plain", base64: "eA==" });
  });

  test("percent escapes are bytes as they stand; other characters are their UTF-8 bytes", () => {
    const bytes = (url: string) => [...Buffer.from(parseDataUrl(url)!.base64, "base64")];
    expect(bytes("data:text/plain,%E2%82%AC")).toEqual([0xe2, 0x82, 0xac]);
    expect(bytes("data:application/octet-stream,%FF%00%fe")).toEqual([0xff, 0x00, 0xfe]);
    expect(bytes("data:text/plain,a%25b€")).toEqual([0x61, 0x25, 0x62, 0xe2, 0x82, 0xac]);
  });

  test("malformed ones are not data URLs", () => {
    for (const bad of ["data:image/png;base64", "data:not a type,x", "https://x.test/a.png", "data:text/plain,%E0%A4%A", "data:,%", "data:,%zz"]) expect(parseDataUrl(bad)).toBeNull();
  });

  test("a URL is inline bytes when it is a data URL, a reference otherwise; bare file data is base64 of no declared type", () => {
    expect(sourceFromUrl("data:image/jpeg;base64,/9j/")).toEqual({ kind: "base64", mediaType: "image/jpeg", data: "/9j/" });
    expect(sourceFromUrl("https://x.test/a.png")).toEqual({ kind: "url", url: "https://x.test/a.png" });
    expect(sourceFromFileData("UklGRg==")).toEqual({ kind: "base64", mediaType: null, data: "UklGRg==" });
    expect(sourceFromFileData("data:audio/wav;base64,UklGRg==")).toEqual({ kind: "base64", mediaType: "audio/wav", data: "UklGRg==" });
  });
});
