// The real app's OpenAPI document lists every /v1 route kiln serves.
import { describe, expect, test } from "bun:test";
import { testKiln } from "../helpers/kiln.ts";

describe("OpenAPI document of the whole app", async () => {
  const k = await testKiln();

  test("every /v1 route is documented, with its method", async () => {
    const doc = (await (await k.req("/swagger/json", { key: null })).json()) as { paths: Record<string, Record<string, unknown>> };
    const served = k.routes.routes
      .filter((r) => r.path.startsWith("/v1/"))
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`)
      .sort();
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m} ${path}`))
      .filter((s) => s.includes(" /v1/"))
      .sort();
    expect(served.length).toBeGreaterThanOrEqual(4);
    expect(documented).toEqual(served);
  });
});

describe("Responses and Messages in the OpenAPI document", async () => {
  const k = await testKiln();

  test("every request field is documented, and each request and answer has an example", async () => {
    const doc = (await (await k.req("/swagger/json", { key: null })).json()) as any;
    const body = (path: string) => doc.paths[path].post.requestBody.content["application/json"].schema;
    const ok = (path: string) => doc.paths[path].post.responses["200"].content["application/json"].schema;
    const responses = body("/v1/responses");
    for (const field of ["model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "tools", "tool_choice", "parallel_tool_calls", "text", "reasoning", "reasoning_effort", "include", "metadata", "store", "stream", "background", "previous_response_id", "user"]) {
      expect(responses.properties).toHaveProperty(field);
      expect(responses.examples[0]).toBeDefined();
    }
    // Chat's request body is documented too (a body parsed by the edge still shows as JSON).
    expect(body("/v1/chat/completions").properties).toHaveProperty("messages");
    const completions = body("/v1/completions");
    for (const field of ["model", "prompt", "suffix", "max_tokens", "n", "best_of", "echo", "logprobs", "stop", "stream", "stream_options", "seed", "logit_bias", "user"]) expect(completions.properties).toHaveProperty(field);
    const messages = body("/v1/messages");
    for (const field of ["model", "max_tokens", "messages", "system", "stop_sequences", "temperature", "top_p", "top_k", "metadata", "stream", "tools", "tool_choice", "thinking"]) expect(messages.properties).toHaveProperty(field);
    expect(messages.required).toEqual(expect.arrayContaining(["model", "max_tokens", "messages"]));
    for (const path of ["/v1/responses", "/v1/messages"]) {
      expect(body(path).examples.length).toBeGreaterThan(0);
      expect(ok(path).examples.length).toBeGreaterThan(0);
    }
    expect(ok("/v1/responses/input_tokens").examples[0]).toEqual({ object: "response.input_tokens", input_tokens: 31 });
  });
});

describe("Files in the OpenAPI document", async () => {
  const k = await testKiln();

  test("the upload's multipart form, the list's query, the file object and the download's bytes are described", async () => {
    const doc = (await (await k.req("/swagger/json", { key: null })).json()) as any;
    const form = doc.paths["/v1/files"].post.requestBody.content["multipart/form-data"].schema;
    expect(Object.keys(form.properties)).toEqual(["file", "purpose"]);
    expect(form.properties.file).toMatchObject({ type: "string", format: "binary" });
    expect(form.required).toEqual(["file", "purpose"]);
    expect(doc.paths["/v1/files"].get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual(["query:order", "query:after", "query:limit", "query:purpose"]);
    const file = doc.paths["/v1/files/{id}"].get.responses["200"].content["application/json"].schema;
    expect(Object.keys(file.properties)).toEqual(["id", "object", "bytes", "created_at", "filename", "purpose", "status"]);
    expect(file.examples[0].id).toStartWith("file-");
    expect(Object.keys(doc.paths["/v1/files/{id}/content"].get.responses["200"].content)).toEqual(["application/octet-stream"]);
    expect(doc.paths["/v1/files/{id}"].delete.responses["200"].content["application/json"].schema.properties.deleted).toBeDefined();
  });
});
