// Child process of test/helpers/s3-server.ts: a real S3-compatible server (fauxqs, from npm) on 127.0.0.1 at a free
// port, its objects and pending multipart uploads kept as plain files under the directory given, one bucket made.
// Prints {"port": N} once it listens, then serves until killed. Runs under Bun (fauxqs needs node:sqlite, which
// Node 20 lacks).
import { Server } from "node:http";

const [dir, bucket] = process.argv.slice(2);
if (!dir || !bucket) throw new Error("usage: s3-server-main.ts <storage dir> <bucket>");

// fauxqs always listens on 0.0.0.0 (no option for the host): tests keep every socket on loopback.
const listen = Server.prototype.listen as (...args: unknown[]) => Server;
Server.prototype.listen = function (this: Server, ...args: unknown[]) {
  if (args[0] && typeof args[0] === "object") args[0] = { ...(args[0] as object), host: "127.0.0.1" };
  return listen.apply(this, args);
} as typeof Server.prototype.listen;

const { startFauxqs } = await import("fauxqs");
const server = await startFauxqs({ port: 0, host: "127.0.0.1", logger: false, s3StorageDir: dir });
server.createBucket(bucket);
console.log(JSON.stringify({ port: server.port }));
