// The default connector over https: it connects to the vetted address while SNI and the certificate check use the
// URL's name, against a loopback TLS server with certificates made here by openssl.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { directConnector } from "../../../src/media/fetch-net.ts";
import { type FetchPolicy, fetchRemote } from "../../../src/media/fetch-policy.ts";
import { loopbackNet, refusal } from "../../helpers/loopback-net.ts";
import { tempDir } from "../../helpers/kiln.ts";

const POLICY: FetchPolicy = {
  maxBytes: 64 * 1024, timeoutMs: 10_000, maxRedirects: 3, allowList: [], robots: false, userAgent: "kiln/test", allowLoopback: true,
};

/** A self-signed certificate (PEM) and its key for the given subjectAltName. */
function selfSigned(dir: string, name: string, san: string): { cert: string; key: string } {
  const [cert, key] = [join(dir, `${name}.crt`), join(dir, `${name}.key`)];
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
    "-keyout", key, "-out", cert, "-subj", `/CN=${name}`, "-addext", `subjectAltName=${san}`,
  ], { stdio: "ignore" });
  return { cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") };
}

let server: ReturnType<typeof Bun.serve>;
let literal: ReturnType<typeof Bun.serve>;
let literal6: ReturnType<typeof Bun.serve>;
let ca: string[];
const hosts: string[] = [];

/** A TLS server on a loopback address that records each Host header and answers "secure bytes". */
function serveTls(tls: Bun.TLSOptions | Bun.TLSOptions[], hostname = "127.0.0.1") {
  return Bun.serve({
    hostname,
    port: 0,
    tls,
    fetch(req) {
      hosts.push(req.headers.get("host")!);
      return new Response("secure bytes", { headers: { "content-type": "image/png" } });
    },
  });
}

beforeAll(() => {
  const dir = tempDir("kiln-tls-");
  const fallback = selfSigned(dir, "default.test", "DNS:default.test");
  const media = selfSigned(dir, "media.test", "DNS:media.test");
  const address = selfSigned(dir, "address", "IP:127.0.0.1,IP:::1");
  ca = [fallback.cert, media.cert, address.cert];
  // media.test's certificate is served only to a client that sends SNI media.test; others get the fallback.
  server = serveTls([fallback, { ...media, serverName: "media.test" }]);
  literal = serveTls(address);
  literal6 = serveTls(address, "::1");
});

afterAll(() => {
  server.stop(true);
  literal.stop(true);
  literal6.stop(true);
});

const names = { "media.test": ["127.0.0.1"], "wrong.test": ["127.0.0.1"] };

test("https to a name: connected to its address, SNI and the certificate check use the name", async () => {
  const net = loopbackNet(names, directConnector({ ca }));
  const got = await fetchRemote(`https://media.test:${server.port}/a.png`, POLICY, net);
  expect([new TextDecoder().decode(got.bytes), got.contentType]).toEqual(["secure bytes", "image/png"]);
  expect(net.connected).toEqual(["127.0.0.1"]);
  expect(hosts.at(-1)).toBe(`media.test:${server.port}`);
  // A fully qualified name's trailing dot is not part of the certificate's name.
  expect((await fetchRemote(`https://media.test.:${server.port}/a.png`, POLICY, net)).bytes.length).toBe(12);
  expect(net.violations).toEqual([]);
});

test("a certificate not valid for the name is refused, even though the address and its CA are trusted", async () => {
  const before = hosts.length;
  const net = loopbackNet(names, directConnector({ ca }));
  expect(await refusal(fetchRemote(`https://wrong.test:${server.port}/a.png`, POLICY, net))).toEqual({
    reason: "unreachable", message: `could not connect to wrong.test:${server.port}: its TLS certificate could not be verified for wrong.test`,
  });
  expect(hosts.length).toBe(before);
});

test("without the test CA, the self-signed certificate is refused: the system roots are what the default trusts", async () => {
  const net = loopbackNet(names);
  expect((await refusal(fetchRemote(`https://media.test:${server.port}/a.png`, POLICY, net))).message).toBe(
    `could not connect to media.test:${server.port}: its TLS certificate could not be verified for media.test`,
  );
});

test("NODE_TLS_REJECT_UNAUTHORIZED=0 does not turn the check off", async () => {
  const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
  try {
    expect((await refusal(fetchRemote(`https://wrong.test:${server.port}/a.png`, POLICY, loopbackNet(names)))).reason).toBe("unreachable");
  } finally {
    if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
  }
});

test("an IP-literal https URL sends no SNI and is checked against the address", async () => {
  const got = await fetchRemote(`https://127.0.0.1:${literal.port}/a.png`, POLICY, loopbackNet({}, directConnector({ ca })));
  expect(new TextDecoder().decode(got.bytes)).toBe("secure bytes");
  expect(hosts.at(-1)).toBe(`127.0.0.1:${literal.port}`);
  const got6 = await fetchRemote(`https://[::1]:${literal6.port}/a.png`, POLICY, loopbackNet({}, directConnector({ ca })));
  expect(new TextDecoder().decode(got6.bytes)).toBe("secure bytes");
  expect(hosts.at(-1)).toBe(`[::1]:${literal6.port}`);
});
