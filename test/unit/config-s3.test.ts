// The S3 options: unset keeps files on disk; a bucket with both keys selects S3 (AWS's endpoint for the region when
// none is given); bad values and half-set combinations are one ConfigError line that never holds the secret.
import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";

const SECRET = "very-secret-value-0123456789";
const FULL = { KILN_S3_BUCKET: "kiln-files", KILN_S3_ACCESS_KEY_ID: "AKIDEXAMPLE", KILN_S3_SECRET_ACCESS_KEY: SECRET };

/** The ConfigError loadConfig throws for `env` (fails the test if it throws none, or another error). */
function refusal(env: Record<string, string>, argv: string[] = []): string {
  try {
    loadConfig(env, argv);
  } catch (e) {
    if (e instanceof ConfigError) return e.message;
    throw e;
  }
  throw new Error("no ConfigError");
}

describe("S3 options", () => {
  test("unset: no bucket, region us-east-1", () => {
    const c = loadConfig({}, []);
    expect([c.s3Bucket, c.s3Endpoint, c.s3Region, c.s3AccessKeyId, c.s3SecretAccessKey]).toEqual([undefined, undefined, "us-east-1", undefined, undefined]);
  });

  test("a bucket with both keys, from the environment or flags; the endpoint is kept as its origin", () => {
    const c = loadConfig({ ...FULL, KILN_S3_ENDPOINT: "http://127.0.0.1:9000/", KILN_S3_REGION: "eu-west-3" }, []);
    expect([c.s3Bucket, c.s3Endpoint, c.s3Region, c.s3AccessKeyId, c.s3SecretAccessKey]).toEqual(["kiln-files", "http://127.0.0.1:9000", "eu-west-3", "AKIDEXAMPLE", SECRET]);
    const f = loadConfig({}, ["--s3-bucket", "b.kiln-2", "--s3-endpoint=https://minio.internal", "--s3-access-key-id", "k", "--s3-secret-access-key", "s"]);
    expect([f.s3Bucket, f.s3Endpoint]).toEqual(["b.kiln-2", "https://minio.internal"]);
  });

  test("half-set combinations name what is missing", () => {
    expect(refusal({ KILN_S3_ENDPOINT: "http://127.0.0.1:9000" })).toBe(
      "KILN_S3_ENDPOINT is set but KILN_S3_BUCKET is not: set the bucket to keep files in S3, or unset the S3 options to keep them on disk",
    );
    expect(refusal({ KILN_S3_SECRET_ACCESS_KEY: SECRET })).toStartWith("KILN_S3_SECRET_ACCESS_KEY is set but KILN_S3_BUCKET is not");
    expect(refusal({ KILN_S3_BUCKET: "kiln-files" })).toBe("KILN_S3_BUCKET is set but KILN_S3_ACCESS_KEY_ID and KILN_S3_SECRET_ACCESS_KEY are not: S3 needs both keys");
    expect(refusal({ KILN_S3_BUCKET: "kiln-files", KILN_S3_ACCESS_KEY_ID: "k" })).toBe("KILN_S3_BUCKET is set but KILN_S3_SECRET_ACCESS_KEY is not: S3 needs both keys");
  });

  test("bad values: endpoint not an http(s) origin, bucket not a bucket name, region not a region; a message is one line without the secret", () => {
    const cases: [Record<string, string>, string][] = [
      [{ KILN_S3_ENDPOINT: "not a url" }, 'KILN_S3_ENDPOINT must be an http(s) URL, got "not a url"'],
      [{ KILN_S3_ENDPOINT: "minio:9000" }, "KILN_S3_ENDPOINT must be http(s)://host[:port]"],
      [{ KILN_S3_ENDPOINT: "ftp://minio:9000" }, "KILN_S3_ENDPOINT must be http(s)://host[:port]"],
      [{ KILN_S3_ENDPOINT: "http://minio:9000/kiln" }, "KILN_S3_ENDPOINT must be http(s)://host[:port] with no path"],
      [{ KILN_S3_ENDPOINT: `http://user:${SECRET}@minio:9000` }, "KILN_S3_ENDPOINT must be http(s)://host[:port]"],
      [{ KILN_S3_BUCKET: "Kiln_Files" }, 'KILN_S3_BUCKET must be an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens), got "Kiln_Files"'],
      [{ KILN_S3_BUCKET: "a/b" }, "KILN_S3_BUCKET must be an S3 bucket name"],
      [{ KILN_S3_BUCKET: "ab" }, "KILN_S3_BUCKET must be an S3 bucket name"],
      [{ KILN_S3_REGION: "US East" }, "KILN_S3_REGION must be a region name"],
      [{ KILN_S3_SECRET_ACCESS_KEY: " " }, "KILN_S3_SECRET_ACCESS_KEY must not be empty"],
    ];
    for (const [env, start] of cases) {
      const message = refusal({ ...FULL, ...env });
      expect([env, message.slice(0, start.length)]).toEqual([env, start]);
      expect(message).not.toContain("\n");
      expect(message).not.toContain(SECRET);
    }
  });
});
