// The file storage the config asks for: an S3 bucket when KILN_S3_BUCKET is set, else the data dir's files/.
import type { Config } from "../config.ts";
import { DiskFileStorage } from "./disk-storage.ts";
import { S3FileStorage } from "./s3-storage.ts";
import type { FileStorage } from "./storage.ts";

/** Added to the upload time limit before an open multipart upload counts as stale: replicas' clocks may differ. */
const STALE_UPLOAD_MARGIN_MS = 10 * 60_000;

type StorageConfig = Pick<Config, "dataDir" | "uploadTimeoutMs" | "s3Bucket" | "s3Endpoint" | "s3Region" | "s3AccessKeyId" | "s3SecretAccessKey">;

export function createFileStorage(config: StorageConfig): FileStorage {
  if (!config.s3Bucket) return new DiskFileStorage(config.dataDir);
  return new S3FileStorage({
    endpoint: s3Endpoint(config),
    bucket: config.s3Bucket,
    region: config.s3Region,
    // Both keys are there: loadConfig refuses a bucket without them.
    accessKeyId: config.s3AccessKeyId!,
    secretAccessKey: config.s3SecretAccessKey!,
    staleUploadMs: config.uploadTimeoutMs + STALE_UPLOAD_MARGIN_MS,
  });
}

/** The endpoint kiln talks to: the configured one, else AWS S3's in the region. */
export function s3Endpoint(config: Pick<Config, "s3Endpoint" | "s3Region">): string {
  return config.s3Endpoint ?? `https://s3.${config.s3Region}.amazonaws.com`;
}

/** Where files are kept, for the start-up log: never a key. */
export function storagePlace(config: StorageConfig): Record<string, string> {
  return config.s3Bucket ? { store: "s3", endpoint: s3Endpoint(config), bucket: config.s3Bucket } : { store: "disk", dir: `${config.dataDir}/files` };
}
