// The streaming multipart parser: the same parts whatever the chunking, bytes that only look like a boundary kept as
// data, and a 400 for each malformed form.
import { describe, expect, test } from "bun:test";
import { MAX_PART_HEADER_BYTES, MultipartParser } from "../../../src/files/multipart.ts";
import { apiRefusalOf } from "../../helpers/api-refusal.ts";

const B = "XyZ-boundary";

interface Parsed {
  parts: { name: string; filename: string | null; contentType: string | null; data: string }[];
  done: boolean;
}

/** Feeds `chunks` through a parser and gathers its events into parts; data is read as latin1 (one char per byte). */
function parse(chunks: Uint8Array[], boundary = B): Parsed {
  const p = new MultipartParser(boundary);
  const out: Parsed = { parts: [], done: false };
  let open = false;
  for (const c of chunks) {
    for (const ev of p.push(c)) {
      if (ev.type === "part") {
        expect(open).toBe(false);
        out.parts.push({ ...ev.part, data: "" });
        open = true;
      } else if (ev.type === "data") {
        expect(open).toBe(true);
        out.parts.at(-1)!.data += Buffer.from(ev.bytes).toString("latin1");
      } else if (ev.type === "partEnd") open = false;
      else out.done = true;
    }
  }
  p.finish();
  return out;
}

const bytes = (s: string) => Buffer.from(s, "latin1");

/** A body cut into pieces at the given offsets. */
function cut(body: Buffer, at: number[]): Buffer[] {
  const points = [0, ...at, body.length];
  return points.slice(1).map((end, i) => body.subarray(points[i], end));
}


// File data full of near-misses: a CR at the end, "\r\n--" and a boundary prefix without its last character.
const TRICKY = `a\r\nb\r\n--\r\n--XyZ-boundar\r\n-XyZ-boundary\r`;
const FORM =
  `preamble to ignore\r\n--${B}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n` +
  `--${B}  \r\ncontent-disposition: form-data; name="file"; filename="a \\"b\\".bin"\r\nContent-Type: application/octet-stream\r\n\r\n${TRICKY}\r\n` +
  `--${B}--\r\nepilogue to ignore`;
const EXPECTED: Parsed = {
  parts: [
    { name: "purpose", filename: null, contentType: null, data: "vision" },
    { name: "file", filename: 'a "b".bin', contentType: "application/octet-stream", data: TRICKY },
  ],
  done: true,
};

describe("MultipartParser", () => {
  test("parses a form with a preamble, transport padding, quoted filename, near-miss boundaries and an epilogue", () => {
    expect(parse([bytes(FORM)])).toEqual(EXPECTED);
  });

  test("gives the same parts for every way of cutting the body in two, and byte by byte", () => {
    const body = bytes(FORM);
    for (let i = 1; i < body.length; i++) expect([i, parse(cut(body, [i]))]).toEqual([i, EXPECTED]);
    expect(parse([...body].map((b) => Uint8Array.of(b)))).toEqual(EXPECTED);
  });

  test("a body that starts with its first boundary (no preamble), and an empty part", () => {
    const body = bytes(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="e"\r\n\r\n\r\n--${B}--`);
    expect(parse([body])).toEqual({ parts: [{ name: "file", filename: "e", contentType: null, data: "" }], done: true });
  });

  test("an RFC 5987 filename* wins over filename", () => {
    const body = bytes(`--${B}\r\nContent-Disposition: form-data; name="file"; filename="plain.txt"; filename*=UTF-8''na%C3%AFve.txt\r\n\r\nx\r\n--${B}--`);
    expect(parse([body]).parts[0]!.filename).toBe("naïve.txt");
  });

  test("large data passes through with only a boundary's length held back between chunks", () => {
    const data = Buffer.alloc(3 * 1024 * 1024, 0x0d);
    const body = Buffer.concat([bytes(`--${B}\r\nContent-Disposition: form-data; name="file"\r\n\r\n`), data, bytes(`\r\n--${B}--\r\n`)]);
    const p = new MultipartParser(B);
    let total = 0;
    let largestEvent = 0;
    for (const c of cut(body, [100_000, 1_100_000, 2_100_000, 3_000_000])) {
      for (const ev of p.push(c)) {
        if (ev.type !== "data") continue;
        total += ev.bytes.byteLength;
        largestEvent = Math.max(largestEvent, ev.bytes.byteLength);
      }
    }
    p.finish();
    expect(total).toBe(data.length);
    expect(largestEvent).toBeLessThanOrEqual(1_000_000 + B.length + 4);
  });

  test("malformed forms are 400s that say what is wrong", () => {
    const head = `--${B}\r\nContent-Disposition: form-data; name="file"\r\n\r\n`;
    expect(apiRefusalOf(() => parse([bytes(`${head}no closing boundary`)])).message).toBe(
      "The multipart/form-data body is malformed: it ended before its closing boundary.",
    );
    expect(apiRefusalOf(() => parse([bytes("no boundary at all")])).status).toBe(400);
    expect(apiRefusalOf(() => parse([bytes(`--${B}junk\r\n\r\n`)])).message).toContain("a boundary is followed by other text on its line");
    expect(apiRefusalOf(() => parse([bytes(`--${B}-x`)])).message).toContain("neither a line break nor --");
    expect(apiRefusalOf(() => parse([bytes(`--${B}\r\nContent-Type: text/plain\r\n\r\nx\r\n--${B}--`)])).message).toBe(
      "Each part of the multipart body needs a Content-Disposition: form-data header with a name.",
    );
    expect(apiRefusalOf(() => parse([bytes(`--${B}\r\nno colon here\r\n\r\n`)])).message).toContain("malformed header line");
    const huge = `--${B}\r\nContent-Disposition: form-data; name="file"\r\nX-Pad: ${"a".repeat(MAX_PART_HEADER_BYTES)}\r\n\r\n`;
    expect(apiRefusalOf(() => parse(cut(bytes(huge), [10, 5000, 9000]))).message).toContain(`longer than ${MAX_PART_HEADER_BYTES} bytes`);
  });
});
