// The bad-input corpus: hostile and careless requests against a real server socket. Each row names the request and
// what must come back; every answer is checked for the spec's shape, for leaked internals, and the server must
// still answer a normal request afterwards. Later endpoints add their rows here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { httpRequest, rawRequest, type RawResponse } from "../helpers/raw-http.ts";

let s: TestServer;
let port = 0;
beforeAll(async () => {
  s = await startTestServer({ KILN_MAX_BODY_BYTES: String(1024 * 1024) });
  port = Number(new URL(s.url).port);
});
afterAll(() => s.stop(1000));

type Expect =
  | { status: number; error: { type: string; code?: string | null; param?: string | RegExp | null; message?: RegExp } }
  | { status: number; empty: true }
  | { status: number; json: (body: any) => void }
  /** Refused by Bun's HTTP parser before kiln sees it: a 4xx or a closed connection, never a page. */
  | { bunRefuses: true };

interface Row {
  name: string;
  /** Raw request bytes, built when the row runs (the key is only known then). */
  request: () => string | Uint8Array;
  expect: Expect;
}

const CHAT = "/v1/chat/completions";
const key = () => s.key;
const auth = () => ({ authorization: `Bearer ${key()}` });
const json = { "content-type": "application/json" };
const close = { connection: "close" };
const model = () => s.modelId;
const user = [{ role: "user", content: "hi" }];
const chat = (body: unknown, headers: Record<string, string> = {}) => () =>
  httpRequest("POST", CHAT, { headers: { ...auth(), ...json, ...close, ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });
const chatWith = (extra: Record<string, unknown>) => () => chat({ model: model(), messages: user, max_tokens: 1, ...extra })();
const get = (target: string, opts: { host?: string | null; headers?: Record<string, string> } = {}) => () =>
  httpRequest("GET", target, { ...opts, headers: { ...close, ...opts.headers } });
const getKeyed = (target: string) => () => get(target, { headers: auth() })();

/** A keyed chat request whose body is exactly these bytes. */
const withBytes = (body: Uint8Array) =>
  Buffer.concat([Buffer.from(httpRequest("POST", CHAT, { headers: { ...auth(), ...json, ...close, "content-length": String(body.length) } })), body]);

const bad = (param: string | RegExp | null = null, message?: RegExp): Expect => ({ status: 400, error: { type: "invalid_request_error", code: null, param, message } });
const unauthorized: Expect = { status: 401, error: { type: "authentication_error", code: "invalid_api_key", param: null, message: /^Unauthorized$/ } };
const empty404: Expect = { status: 404, empty: true };
const alive: Expect = { status: 200, json: (b) => expect(b.is_alive).toBe(true) };
const completion: Expect = { status: 200, json: (b) => expect(b.object).toBe("chat.completion") };
const notJson = bad(null, /not valid JSON/);
const tooDeep = bad(null, /nested more than 64 levels/);
const nested = (n: number) => "[".repeat(n) + "]".repeat(n);
const big = (n: number) => "x".repeat(n);

const ROWS: Row[] = [
  // Authentication: checked from the headers before the body, one 401 for every way of getting it wrong.
  { name: "no key", request: () => httpRequest("POST", CHAT, { headers: { ...json, ...close }, body: JSON.stringify({ model: "m", messages: user }) }), expect: unauthorized },
  { name: "no key, malformed JSON", request: () => httpRequest("POST", CHAT, { headers: { ...json, ...close }, body: '{"model":' }), expect: unauthorized },
  { name: "no key, nested 100,000 deep", request: () => httpRequest("POST", CHAT, { headers: { ...json, ...close }, body: nested(100_000) }), expect: unauthorized },
  { name: "no key, 2 MiB body (over the limit)", request: () => httpRequest("POST", CHAT, { headers: { ...json, ...close }, body: big(2 * 1024 * 1024) }), expect: unauthorized },
  { name: "empty Authorization", request: chat({ model: "m", messages: user }, { authorization: "" }), expect: unauthorized },
  { name: "Bearer without a key", request: chat({}, { authorization: "Bearer" }), expect: unauthorized },
  { name: "Bearer and spaces", request: chat({}, { authorization: "Bearer    " }), expect: unauthorized },
  { name: "Basic scheme with the key", request: () => chat({}, { authorization: `Basic ${btoa(key())}` })(), expect: unauthorized },
  { name: "Token scheme", request: () => chat({}, { authorization: `Token ${key()}` })(), expect: unauthorized },
  { name: "key plus trailing words", request: () => chat({}, { authorization: `Bearer ${key()} extra` })(), expect: unauthorized },
  { name: "sk- style key", request: chat({}, { authorization: "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789" }), expect: unauthorized },
  { name: "right id, wrong secret", request: () => chat({}, { authorization: `Bearer ${key().replace(/\|[^|]+$/, "|" + "A".repeat(40))}` })(), expect: unauthorized },
  { name: "id 0", request: chat({}, { authorization: `Bearer LLM|0|${"A".repeat(40)}` }), expect: unauthorized },
  { name: "id past 2^53", request: chat({}, { authorization: `Bearer LLM|99999999999999999|${"A".repeat(40)}` }), expect: unauthorized },
  { name: "mixed separators", request: () => chat({}, { authorization: `Bearer ${key().replace("|", "_")}` })(), expect: unauthorized },
  { name: "6 KB Authorization", request: chat({}, { authorization: `Bearer ${big(6000)}` }), expect: unauthorized },
  { name: "wrong x-api-key", request: () => httpRequest("GET", "/v1/models", { headers: { "x-api-key": "nope", ...close } }), expect: unauthorized },
  { name: "lower-case bearer works", request: () => get("/v1/models", { headers: { authorization: `bearer ${key()}` } })(), expect: { status: 200, json: (b) => expect(b.object).toBe("list") } },

  // Bodies: framing, encoding, content type, size, depth.
  { name: "truncated JSON", request: chat('{"model": "x", '), expect: notJson },
  { name: "trailing garbage", request: chat('{"model": "x"} {}'), expect: notJson },
  { name: "NaN literal", request: chat('{"model": "x", "temperature": NaN}'), expect: notJson },
  { name: "single quotes", request: chat("{'model': 'x'}"), expect: notJson },
  { name: "byte-order mark is skipped", request: chat('\uFEFF{"model":"x"}'), expect: bad("messages") },
  { name: "empty body", request: chat(""), expect: bad(null, /empty/) },
  { name: "invalid UTF-8", request: () => withBytes(Buffer.from([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])), expect: bad(null, /UTF-8/) },
  { name: "text/plain body", request: chat({ model: "m", messages: user }, { "content-type": "text/plain" }), expect: bad(null, /Content-Type: application\/json \(got 'text\/plain'\)/) },
  { name: "form-encoded body", request: chat("model=x&messages=y", { "content-type": "application/x-www-form-urlencoded" }), expect: bad(null, /must be JSON/) },
  { name: "multipart body", request: chat("--b\r\n\r\n--b--", { "content-type": "multipart/form-data; boundary=b" }), expect: bad(null, /must be JSON/) },
  { name: "JSON array at the top", request: chat("[1,2]"), expect: bad(null) },
  { name: "JSON string at the top", request: chat('"hi"'), expect: bad(null) },
  { name: "JSON null", request: chat("null"), expect: bad(null) },
  { name: "100,000 nested arrays", request: chat(nested(100_000)), expect: tooDeep },
  { name: "100,000 unclosed [", request: chat("[".repeat(100_000)), expect: tooDeep },
  { name: "65 levels inside a field", request: () => chat(`{"model":"${model()}","messages":[{"role":"user","content":"hi"}],"metadata":${nested(64)}}`)(), expect: tooDeep },
  { name: "deep brackets inside a string are text", request: chatWith({ messages: [{ role: "user", content: nested(500) }] }), expect: completion },
  { name: "declared body over the limit", request: () => chat(big(1024 * 1024 + 1))(), expect: { status: 413, error: { type: "invalid_request_error", code: "payload_too_large", param: null } } },
  { name: "chunked body over the limit", request: () => httpRequest("POST", CHAT, { headers: { ...auth(), ...json, ...close, "transfer-encoding": "chunked" } }) + `100000\r\n${big(0x100000)}\r\n10\r\n${big(16)}\r\n0\r\n\r\n`, expect: { status: 413, error: { type: "invalid_request_error", code: "payload_too_large", param: null } } },

  // Fields: missing, wrong types, out of range, huge.
  { name: "missing model", request: chat({ messages: user }), expect: bad("model", /Missing required parameter: 'model'/) },
  { name: "model is a number", request: chat({ model: 123, messages: user }), expect: bad("model") },
  { name: "model is empty", request: chat({ model: "", messages: user }), expect: bad("model") },
  { name: "100 KB model name is not echoed", request: chat({ model: big(100_000), messages: user }), expect: { status: 404, error: { type: "invalid_request_error", code: "model_not_found", param: "model", message: /^The model 'x{64}…' does not exist$/ } } },
  { name: "__proto__ instead of model", request: chat('{"__proto__":{"model":"x"},"messages":[{"role":"user","content":"hi"}]}'), expect: bad("model") },
  { name: "messages is a string", request: () => chat({ model: model(), messages: "hi" })(), expect: bad(/^messages/) },
  { name: "messages is empty", request: () => chat({ model: model(), messages: [] })(), expect: bad("messages") },
  { name: "message without content", request: () => chat({ model: model(), messages: [{ role: "user" }] })(), expect: bad("messages.0.content") },
  { name: "content is a number", request: () => chat({ model: model(), messages: [{ role: "user", content: 42 }] })(), expect: bad("messages.0.content") },
  { name: "unknown role", request: () => chat({ model: model(), messages: [{ role: "wizard", content: "hi" }] })(), expect: bad("messages.0.role") },
  { name: "100 KB role is not echoed", request: () => chat({ model: model(), messages: [{ role: big(100_000), content: "hi" }] })(), expect: bad("messages.0.role", /'x{64}…'/) },
  { name: "temperature as a string", request: chatWith({ temperature: "1" }), expect: bad("temperature") },
  { name: "temperature 3", request: chatWith({ temperature: 3 }), expect: bad("temperature") },
  { name: "temperature 1e999 (Infinity)", request: () => chat(`{"model":"${model()}","messages":[{"role":"user","content":"hi"}],"temperature":1e999}`)(), expect: bad("temperature") },
  { name: "top_p 0", request: chatWith({ top_p: 0 }), expect: bad("top_p") },
  { name: "n as a string", request: chatWith({ n: "2" }), expect: bad("n") },
  { name: "n 0", request: chatWith({ n: 0 }), expect: bad("n") },
  { name: "n 17", request: chatWith({ n: 17 }), expect: bad("n") },
  { name: "max_tokens -1", request: chatWith({ max_tokens: -1 }), expect: bad("max_tokens") },
  { name: "max_tokens 1.5", request: chatWith({ max_tokens: 1.5 }), expect: bad("max_tokens") },
  { name: "max_tokens as a string", request: chatWith({ max_tokens: "5" }), expect: bad("max_tokens") },
  { name: "max_tokens 1e300", request: chatWith({ max_tokens: 1e300 }), expect: bad(null, /maximum context length/) },
  { name: "stream as a string", request: chatWith({ stream: "yes" }), expect: bad("stream") },
  { name: "five stop strings", request: chatWith({ stop: ["a", "b", "c", "d", "e"] }), expect: bad("stop") },
  { name: "tools not an array", request: chatWith({ tools: "all" }), expect: bad("tools") },
  { name: "tool_choice unknown", request: chatWith({ tool_choice: "sometimes" }), expect: bad("tool_choice") },
  { name: "response_format xml", request: chatWith({ response_format: { type: "xml" } }), expect: bad("response_format") },
  { name: "top_logprobs 50", request: chatWith({ logprobs: true, top_logprobs: 50 }), expect: bad("top_logprobs") },
  { name: "logit_bias with a word for an id", request: chatWith({ logit_bias: { hello: 5 } }), expect: bad(/^logit_bias/) },
  { name: "metadata with a long key and a number", request: chatWith({ metadata: { [big(1000)]: 1 } }), expect: bad(/^metadata/) },
  // Within this server's 1 MiB body no prompt is past the 131,072-token context by the byte bound (edge-limits.test.ts
  // covers that path): this one is tokenized and refused with its exact count.
  { name: "a prompt past the context is refused with its count", request: chatWith({ messages: [{ role: "user", content: "word ".repeat(180_000) }] }), expect: bad(null, /maximum context length is 131072 tokens\. However, you requested \d+ tokens \(\d+ in the input, 1 in the output\)/) },
  { name: "duplicate keys: the last wins", request: () => chat(`{"model":"nope","model":"${model()}","messages":[{"role":"user","content":"hi"}],"max_tokens":1}`)(), expect: completion },

  // Hosts: routing never depends on the Host header.
  { name: "Host a:b:c", request: get("/v1/status", { host: "a:b:c" }), expect: alive },
  { name: "Host ai", request: get("/v1/status", { host: "ai" }), expect: alive },
  { name: "Host ai, keyed route", request: () => get("/v1/models", { host: "ai", headers: auth() })(), expect: { status: 200, json: (b) => expect(b.data[0].id).toBe(model()) } },
  { name: "Host a:b:c, generation", request: () => httpRequest("POST", CHAT, { host: "a:b:c", headers: { ...auth(), ...json, ...close }, body: JSON.stringify({ model: model(), messages: user, max_tokens: 1 }) }), expect: completion },
  { name: "Host a:b:c without a key", request: () => httpRequest("POST", CHAT, { host: "a:b:c", headers: { ...json, ...close }, body: "{}" }), expect: unauthorized },
  { name: "empty Host", request: get("/v1/status", { host: "" }), expect: alive },
  { name: "Host with a slash", request: get("/v1/status", { host: "x/y" }), expect: alive },
  { name: "Host with a space", request: get("/v1/status", { host: "a b" }), expect: alive },
  { name: "IPv6 Host", request: get("/v1/status", { host: "[::1]:1" }), expect: alive },
  { name: "4 KB Host", request: get("/v1/status", { host: big(4096) }), expect: alive },
  { name: "no Host header", request: get("/v1/status", { host: null }), expect: { bunRefuses: true } },

  // Paths.
  { name: "absolute-form target", request: get("http://evil.example/v1/status"), expect: alive },
  { name: "dot segments", request: get("/v1/../v1/./status"), expect: alive },
  { name: "encoded dot segments", request: get("/v1/%2e%2e/v1/status"), expect: alive },
  { name: "double slash", request: get("//v1/status"), expect: alive },
  { name: "trailing slash", request: get("/v1/status/"), expect: alive },
  { name: "query string", request: get("/v1/status?<script>=1"), expect: alive },
  { name: "upper case path", request: get("/V1/STATUS"), expect: empty404 },
  { name: "NUL in the path", request: get("/v1/status%00"), expect: empty404 },
  { name: "unknown path with a key", request: getKeyed("/v1/nope"), expect: empty404 },
  { name: "unknown path, no key", request: get("/nothing/here"), expect: empty404 },
  { name: "traversal into docs assets", request: get("/swagger/assets/..%2f..%2f..%2fpackage.json"), expect: empty404 },
  { name: "traversal as a model id", request: getKeyed("/v1/models/..%2f..%2fetc%2fpasswd"), expect: { status: 404, error: { type: "invalid_request_error", code: "model_not_found", param: "model" } } },
  { name: "8 KB path", request: get(`/${big(8000)}`), expect: empty404 },

  // Methods.
  { name: "DELETE status", request: () => httpRequest("DELETE", "/v1/status", { headers: close }), expect: empty404 },
  { name: "PUT chat with a key", request: () => httpRequest("PUT", CHAT, { headers: { ...auth(), ...json, ...close }, body: "{}" }), expect: empty404 },
  { name: "GET chat with a key", request: getKeyed(CHAT), expect: empty404 },
  { name: "POST models with a key", request: () => httpRequest("POST", "/v1/models", { headers: { ...auth(), ...json, ...close }, body: "{}" }), expect: empty404 },
  { name: "OPTIONS status", request: () => httpRequest("OPTIONS", "/v1/status", { headers: close }), expect: empty404 },
  { name: "TRACE root", request: () => httpRequest("TRACE", "/", { headers: close }), expect: empty404 },
  { name: "made-up method", request: () => httpRequest("BREW", "/v1/status", { headers: close }), expect: { bunRefuses: true } },
];

const INTERNALS = [/\/work\//, /node_modules/, /\.ts:\d+/, /\bat [\w<>.]+ \(/, /Bun v\d/, /\/tmp\//, /<html/i, /stack/i];

function checkAnswer(res: RawResponse, want: Expect) {
  for (const re of INTERNALS) expect(res.raw).not.toMatch(re);
  if ("bunRefuses" in want) {
    expect(res.status === 0 || (res.status >= 400 && res.status < 500)).toBe(true);
    return;
  }
  expect(res.status).toBe(want.status);
  if ("empty" in want) {
    expect(res.body).toBe("");
    return;
  }
  expect(res.headers["content-type"]).toContain("application/json");
  const body = JSON.parse(res.body);
  if ("json" in want) return want.json(body);
  // Error answers are the spec's object, exactly, and short: nothing the client sent is echoed at length.
  expect(Object.keys(body)).toEqual(["error"]);
  expect(Object.keys(body.error).sort()).toEqual(["code", "message", "param", "type"]);
  expect(typeof body.error.message).toBe("string");
  expect(res.body.length).toBeLessThan(600);
  expect(body.error.type).toBe(want.error.type);
  if (want.error.code !== undefined) expect(body.error.code).toBe(want.error.code);
  if (want.error.param instanceof RegExp) expect(body.error.param).toMatch(want.error.param);
  else if (want.error.param !== undefined) expect(body.error.param).toBe(want.error.param);
  if (want.error.message) expect(body.error.message).toMatch(want.error.message);
  expect(res.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{32}$/);
}

describe("hostile corpus", () => {
  test("has at least 60 rows with distinct names", () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(ROWS.map((r) => r.name)).size).toBe(ROWS.length);
  });

  test.each(ROWS.map((r) => [r.name, r] as const))("%s", async (_name, row) => {
    checkAnswer(await rawRequest(port, row.request()), row.expect);
    // The server still serves a normal keyed request afterwards.
    const after = await fetch(`${s.url}/v1/models`, { headers: auth() });
    expect(after.status).toBe(200);
    expect(((await after.json()) as { object: string }).object).toBe("list");
  });

  test("an unexpected exception: the sanitized 500 and exactly one JSON log line, nothing else", async () => {
    const list = s.deps.registry.list;
    s.deps.registry.list = () => {
      throw new Error("disk /var/lib/secret exploded");
    };
    try {
      const res = await rawRequest(port, getKeyed("/v1/models")());
      checkAnswer(res, { status: 500, error: { type: "server_error", code: null, param: null, message: /^The server had an internal error/ } });
      expect(res.raw).not.toContain("secret");
      const lines = s.logs.filter((l) => l.request_id === res.headers["x-request-id"] && l.level === "error");
      expect(lines).toHaveLength(1);
      expect(lines[0]!.error).toBe("Error: disk /var/lib/secret exploded");
    } finally {
      s.deps.registry.list = list;
    }
  });
});
