// The storage the config asks for: disk without a bucket, S3 with one (AWS's regional endpoint when none is given);
// what the start-up log says of it holds no key.
import { describe, expect, test } from "bun:test";
import { loadConfig } from "../../../src/config.ts";
import { createFileStorage, s3Endpoint, storagePlace } from "../../../src/files/create-storage.ts";
import { DiskFileStorage } from "../../../src/files/disk-storage.ts";
import { S3FileStorage } from "../../../src/files/s3-storage.ts";
import { tempDir } from "../../helpers/kiln.ts";

describe("createFileStorage", () => {
  test("no bucket: the data dir's files/", () => {
    const config = loadConfig({ KILN_DATA_DIR: tempDir() }, []);
    expect(createFileStorage(config)).toBeInstanceOf(DiskFileStorage);
    expect(storagePlace(config)).toEqual({ store: "disk", dir: `${config.dataDir}/files` });
  });

  test("a bucket: S3, at the endpoint given or AWS's for the region; the log line names endpoint and bucket only", () => {
    const env = { KILN_DATA_DIR: tempDir(), KILN_S3_BUCKET: "kiln-files", KILN_S3_ACCESS_KEY_ID: "AKIDEXAMPLE", KILN_S3_SECRET_ACCESS_KEY: "secret-0123456789" };
    const aws = loadConfig({ ...env, KILN_S3_REGION: "eu-west-3" }, []);
    expect(createFileStorage(aws)).toBeInstanceOf(S3FileStorage);
    expect(s3Endpoint(aws)).toBe("https://s3.eu-west-3.amazonaws.com");
    const minio = loadConfig({ ...env, KILN_S3_ENDPOINT: "http://127.0.0.1:9000" }, []);
    expect(storagePlace(minio)).toEqual({ store: "s3", endpoint: "http://127.0.0.1:9000", bucket: "kiln-files" });
    expect(JSON.stringify(storagePlace(minio))).not.toContain("AKIDEXAMPLE");
  });
});
