// A real S3-compatible server for tests: fauxqs (npm) in a child process on 127.0.0.1 at a free port, over a fresh
// temp directory, with one empty bucket. Never a mock: kiln's S3 storage talks to it over HTTP as to any S3.
import { S3Client } from "bun";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./kiln.ts";

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** The KILN_S3_* environment that points kiln at this server. */
  env: Record<string, string>;
  /** A client of the bucket, for looking at it from outside kiln. */
  client: S3Client;
  /** Every object key in the bucket under `prefix`, by the server's own listing (ListObjectsV2). */
  keys(prefix?: string): Promise<string[]>;
  /**
   * The multipart uploads the server holds open (started, neither completed nor aborted), as upload ids. fauxqs does
   * not implement ListMultipartUploads, so this reads its own record of them: one folder per open upload.
   */
  openUploads(): string[];
  /** The parts stored so far of one open upload, by part number (from the same record). */
  storedParts(uploadId: string): number[];
  /** SIGKILL (the server keeps nothing in memory that a test needs afterwards). */
  stop(): Promise<void>;
}

const MAIN = join(import.meta.dir, "s3-server-main.ts");

/** Starts the server; `bucket` defaults to "kiln-test". Call stop() when done. */
export async function startS3Server(opts: { bucket?: string } = {}): Promise<TestS3Server> {
  const dir = tempDir("kiln-s3-");
  const bucket = opts.bucket ?? "kiln-test";
  const proc = Bun.spawn([process.execPath, MAIN, dir, bucket], { stdout: "pipe", stderr: "pipe" });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  let port = 0;
  while (!port) {
    const { value, done } = await reader.read();
    if (done) {
      const err = await new Response(proc.stderr).text();
      throw new Error(`the S3 test server did not start (exit ${await proc.exited}):\n${out}${err}`);
    }
    out += decoder.decode(value, { stream: true });
    port = Number(out.match(/\{"port":(\d+)\}/)?.[1] ?? 0);
  }
  // Keep draining both pipes so the child never blocks on a full one.
  void (async () => {
    while (!(await reader.read()).done);
  })();
  void new Response(proc.stderr).text();
  const endpoint = `http://127.0.0.1:${port}`;
  const creds = { region: "us-east-1", accessKeyId: "kiln-test-key", secretAccessKey: "kiln-test-secret-0123456789" };
  const client = new S3Client({ endpoint, bucket, ...creds });
  return {
    endpoint, bucket, ...creds,
    env: {
      KILN_S3_ENDPOINT: endpoint, KILN_S3_BUCKET: bucket, KILN_S3_REGION: creds.region,
      KILN_S3_ACCESS_KEY_ID: creds.accessKeyId, KILN_S3_SECRET_ACCESS_KEY: creds.secretAccessKey,
    },
    client,
    async keys(prefix = "") {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const page = await client.list({ prefix, continuationToken: token });
        keys.push(...(page.contents ?? []).map((o) => o.key));
        token = page.isTruncated ? page.nextContinuationToken : undefined;
      } while (token);
      return keys.sort();
    },
    openUploads() {
      const uploads = join(dir, "_multipart");
      return existsSync(uploads) ? readdirSync(uploads).sort() : [];
    },
    storedParts(uploadId) {
      const parts = join(dir, "_multipart", uploadId, "parts");
      if (!existsSync(parts)) return [];
      return readdirSync(parts).flatMap((n) => (n.endsWith(".data") ? [Number(n.slice(0, -5))] : [])).sort((a, b) => a - b);
    },
    async stop() {
      proc.kill("SIGKILL");
      await proc.exited;
    },
  };
}
