// `npm run cluster`: a local kiln cluster for trying several replicas: Postgres, Redis, an S3 server, replicas, haproxy.
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startCluster } from "./launch.ts";

const { values } = parseArgs({
  options: { replicas: { type: "string", default: "3" }, port: { type: "string", default: "8080" }, "models-dir": { type: "string", default: "./data/models" } },
});
const replicas = Number(values.replicas);
const port = Number(values.port);
if (!Number.isInteger(replicas) || replicas < 1 || replicas > 16) throw new Error("--replicas takes 1 to 16");
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error("--port takes 0 to 65535");

console.log(`starting Postgres, Redis, an S3 server and ${replicas} kiln replica(s) behind haproxy…`);
const cluster = await startCluster({ replicas, port, modelsDir: resolve(values["models-dir"]!), logLevel: "info" });
console.log(
  [
    `kiln cluster ready: ${cluster.url} (haproxy) over ${cluster.replicas.map((r) => r.url).join(", ")}`,
    `API key: ${cluster.key}`,
    `try: curl ${cluster.url}/v1/chat/completions -H "Authorization: Bearer ${cluster.key}" -H "Content-Type: application/json" -d '{"model":"kiln-tiny-v1","messages":[{"role":"user","content":"Hello"}]}'`,
    "Ctrl-C stops the replicas (drained), haproxy and the servers; their data is temporary.",
  ].join("\n"),
);
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  const codes = await cluster.stop();
  console.log(`stopped; replicas exited with ${codes.join(", ")}`);
  process.exit(codes.every((c) => c === 0) ? 0 : 1);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
