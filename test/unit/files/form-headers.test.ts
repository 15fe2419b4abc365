// Header values of multipart/form-data: parameters, the boundary of the Content-Type, a part's name and filename.
import { describe, expect, test } from "bun:test";
import { boundaryOf, parseParams, partInfo } from "../../../src/files/form-headers.ts";
import { apiRefusalOf } from "../../helpers/api-refusal.ts";


describe("parseParams", () => {
  test("type lowercased, parameters by lowercased name, quotes and backslash escapes undone, the first of a repeated name kept", () => {
    const { type, params } = parseParams('Form-Data; NAME="file"; filename="a\\"b;c.txt" ; x=plain ; name=second');
    expect(type).toBe("form-data");
    expect([...params]).toEqual([["name", "file"], ["filename", 'a"b;c.txt'], ["x", "plain"]]);
  });

  test("an unterminated quote ends the value at the end of the header", () => {
    expect(parseParams('form-data; name="fi').params.get("name")).toBe("fi");
  });
});

describe("boundaryOf", () => {
  test("the boundary, quoted or not", () => {
    expect(boundaryOf("multipart/form-data; boundary=----abc123")).toBe("----abc123");
    expect(boundaryOf('Multipart/Form-Data; charset=utf-8; boundary="a b:c"')).toBe("a b:c");
  });

  test("another type, no boundary, or a boundary too long or with control characters: a 400 that says how to upload", () => {
    expect(apiRefusalOf(() => boundaryOf("application/json")).message).toBe(
      "Upload the file as multipart/form-data with the fields file and purpose (got Content-Type 'application/json').",
    );
    expect(apiRefusalOf(() => boundaryOf(null)).status).toBe(400);
    const bad = "The multipart/form-data Content-Type needs a boundary of 1 to 70 printable characters.";
    expect(apiRefusalOf(() => boundaryOf("multipart/form-data")).message).toBe(bad);
    expect(apiRefusalOf(() => boundaryOf(`multipart/form-data; boundary=${"a".repeat(71)}`)).message).toBe(bad);
    expect(apiRefusalOf(() => boundaryOf('multipart/form-data; boundary="a\tb"')).message).toBe(bad);
  });
});

describe("partInfo", () => {
  test("name, filename and type; header names in any case; a folded line continues its header", () => {
    expect(partInfo('CONTENT-DISPOSITION: form-data; name="file";\r\n filename="x.png"\r\ncontent-type: image/png')).toEqual({
      name: "file", filename: "x.png", contentType: "image/png",
    });
    expect(partInfo('Content-Disposition: form-data; name="purpose"')).toEqual({ name: "purpose", filename: null, contentType: null });
  });

  test("an unreadable filename* falls back to filename", () => {
    expect(partInfo(`Content-Disposition: form-data; name="file"; filename="a.txt"; filename*=latin1''x%ZZ`).filename).toBe("a.txt");
  });
});
