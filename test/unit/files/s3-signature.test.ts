// SigV4 as S3 checks it: the worked examples of Amazon's S3 documentation (header and query signing), the same
// signature Bun's own S3 client puts in a presigned URL, and the encoding rules of paths and queries.
import { describe, expect, test } from "bun:test";
import { S3Client } from "bun";
import { amzDate, canonicalQuery, EMPTY_SHA256, signatureV4, signedHeaders, uriEncode } from "../../../src/files/s3-signature.ts";

// The credentials, bucket and time of the documentation's examples.
const DOC = { secretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", region: "us-east-1", service: "s3", amzDate: "20130524T000000Z" };
const HOST = "examplebucket.s3.amazonaws.com";

describe("signatureV4", () => {
  test("the documentation's GET Object with a Range header", () => {
    const sig = signatureV4({
      ...DOC, method: "GET", path: "/test.txt", query: [], payloadHash: EMPTY_SHA256,
      headers: { Host: HOST, Range: "bytes=0-9", "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": DOC.amzDate },
    });
    expect(sig).toEqual({
      signature: "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
      signedHeaders: "host;range;x-amz-content-sha256;x-amz-date",
      scope: "20130524/us-east-1/s3/aws4_request",
    });
  });

  test("the documentation's PUT Object (a body, a $ in the key, a Date header)", () => {
    const payload = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072";
    const sig = signatureV4({
      ...DOC, method: "PUT", path: `/${uriEncode("test$file.text", true)}`, query: [], payloadHash: payload,
      headers: { Host: HOST, Date: "Fri, 24 May 2013 00:00:00 GMT", "x-amz-date": DOC.amzDate, "x-amz-storage-class": "REDUCED_REDUNDANCY", "x-amz-content-sha256": payload },
    });
    expect(sig.signature).toBe("98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
  });

  test("the documentation's bucket requests: ?lifecycle (a name without a value) and ?max-keys=2&prefix=J", () => {
    const headers = { Host: HOST, "x-amz-date": DOC.amzDate, "x-amz-content-sha256": EMPTY_SHA256 };
    const lifecycle = signatureV4({ ...DOC, method: "GET", path: "/", query: [["lifecycle", ""]], payloadHash: EMPTY_SHA256, headers });
    expect(lifecycle.signature).toBe("fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");
    const list = signatureV4({ ...DOC, method: "GET", path: "/", query: [["prefix", "J"], ["max-keys", "2"]], payloadHash: EMPTY_SHA256, headers });
    expect(list.signature).toBe("34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");
  });

  test("the documentation's presigned URL (query signing)", () => {
    const sig = signatureV4({
      ...DOC, method: "GET", path: "/test.txt", payloadHash: "UNSIGNED-PAYLOAD", headers: { host: HOST },
      query: [
        ["X-Amz-Algorithm", "AWS4-HMAC-SHA256"], ["X-Amz-Credential", "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request"],
        ["X-Amz-Date", DOC.amzDate], ["X-Amz-Expires", "86400"], ["X-Amz-SignedHeaders", "host"],
      ],
    });
    expect(sig.signature).toBe("aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  });

  test("gives the signature Bun's S3 client puts in a presigned URL of the same request", () => {
    const creds = { endpoint: "http://127.0.0.1:9000", bucket: "kiln-test", region: "eu-west-3", accessKeyId: "AKIDKILNTEST", secretAccessKey: "kiln/secret+key=0123456789" };
    for (const [key, method] of [["files/file-0123abcd", "GET"], ["files/a b+c", "DELETE"]] as const) {
      const url = new URL(new S3Client(creds).presign(key, { method, expiresIn: 600 }));
      const query = [...url.searchParams.entries()].filter(([k]) => k !== "X-Amz-Signature");
      const sig = signatureV4({
        method, path: url.pathname, query, headers: { host: url.host }, payloadHash: "UNSIGNED-PAYLOAD",
        amzDate: url.searchParams.get("X-Amz-Date")!, region: creds.region, service: "s3", secretAccessKey: creds.secretAccessKey,
      });
      expect([key, sig.signature]).toEqual([key, url.searchParams.get("X-Amz-Signature")!]);
    }
  });
});

describe("encoding", () => {
  test("uriEncode keeps only unreserved characters (and / in paths); canonicalQuery sorts by name, then value", () => {
    expect(uriEncode("a b+c*d(e)!'~_.-/é")).toBe("a%20b%2Bc%2Ad%28e%29%21%27~_.-%2F%C3%A9");
    expect(uriEncode("files/x y", true)).toBe("files/x%20y");
    expect(canonicalQuery([["uploads", ""], ["prefix", "files/"], ["b", "2"], ["b", "1"]])).toBe("b=1&b=2&prefix=files%2F&uploads=");
  });

  test("amzDate and signedHeaders: the three headers of a bodiless request, with the credential scope of the day", () => {
    const at = new Date("2026-03-04T05:06:07.890Z");
    expect(amzDate(at)).toBe("20260304T050607Z");
    const url = new URL("http://127.0.0.1:9000/kiln/files/file-1?uploadId=abc");
    const h = signedHeaders("DELETE", url, { accessKeyId: "AKID", secretAccessKey: "secret", region: "us-east-1" }, at);
    expect(Object.keys(h).sort()).toEqual(["authorization", "x-amz-content-sha256", "x-amz-date"]);
    expect(h.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKID\/20260304\/us-east-1\/s3\/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/);
  });
});
