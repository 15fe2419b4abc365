// The tiny model's tokenizer: prompts encode the same on and off the main thread, the cheap bound never exceeds
// the real count, and large prompts are tokenized off the main thread.
import { afterAll, describe, expect, test } from "bun:test";
import { OffThreadEncoder } from "../../../src/inference/off-thread-encoder.ts";
import { OFF_THREAD_BYTES, Tokenizers } from "../../../src/inference/tokenizer.ts";
import { memoryLogger } from "../../../src/log/logger.ts";
import { failureOf } from "../../../src/models/failures.ts";
import { scanModels } from "../../../src/models/registry.ts";
import { tokenizerWorkerUrl } from "../../../src/native/worker-url.ts";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fakeManifest, writeFakeModel } from "../../helpers/fake-model.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { presetModelDir, tinyModelDir, tinyOmniModelDir } from "../../helpers/tiny-model.ts";

const model = scanModels(dirname(await tinyModelDir())).models[0]!;
const encoder = new OffThreadEncoder(tokenizerWorkerUrl());
const tokenizers = new Tokenizers({ offThread: encoder });
const tok = await tokenizers.get(model);
afterAll(() => tokenizers.close());

describe("prompt tokenizing", () => {
  const turn = (content: string) => `<|im_start|>user\n${content}<|im_end|>\n<|im_start|>assistant\n`;

  test("a small prompt (main thread) encodes as the tokenizer does, special tokens and a forced prefix included", async () => {
    const text = turn("héllo <|im_start|> wörld 🙂");
    expect(await tok.encodePrompt(text)).toEqual(tok.encodeText(text));
    expect(await tok.encodePrompt(text, "<tool_call>")).toEqual([...tok.encodeText(text), ...tok.encodeText("<tool_call>")]);
  });

  test("the cheap bound never exceeds the real token count", () => {
    const samples = ["", "a", " ".repeat(5000), "word ".repeat(2000), "🙂".repeat(700), "é\u0301ﬁ".repeat(300), "<|im_start|>".repeat(200)];
    let seed = 7;
    for (let i = 0; i < 20; i++) {
      let s = "";
      for (let j = 0; j < 400; j++) s += String.fromCodePoint(((seed = (seed * 48271) % 2147483647) % 0x2fff) + 32);
      samples.push(s);
    }
    for (const s of samples) expect(tok.minTokens(s)).toBeLessThanOrEqual(tok.encodeText(s).length);
    expect(tok.minTokens("word ".repeat(2000))).toBeGreaterThan(0);
  });

  // On the main thread this text takes well over a second to tokenize; off it, the main thread only posts the text
  // and unpacks the ids. The margin allows for a GC pause in a busy test process.
  test("a 4 MB prompt is tokenized in the worker: the main thread never stalls 150 ms, and the ids match", async () => {
    const text = turn("word ".repeat(800_000) + "<|im_end|> é🙂");
    // The worker is started and has the tokenizer loaded (Tokenizers.get warms it); one round trip makes sure.
    expect(await tok.encodePrompt(turn("x".repeat(40_000)))).toEqual(tok.encodeText(turn("x".repeat(40_000))));
    let last = performance.now();
    let worstGap = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 5);
    const ids = await tok.encodePrompt(text);
    clearInterval(ticker);
    expect(worstGap).toBeLessThan(150);
    expect(ids.length).toBeGreaterThan(800_000);
    // The same ids as the main thread gives (which takes over a second for this text).
    expect(ids).toEqual(tok.encodeText(text));
  });

  test("a large prompt the worker hangs on fails with 503 (not tokenized here instead) and the worker is replaced", async () => {
    const logger = memoryLogger();
    const spawned: { terminated: boolean }[] = [];
    // The first worker answers the warm-up (an empty text) and then nothing; a real one takes over after it.
    const hung = new OffThreadEncoder(tokenizerWorkerUrl(), {
      budgetMs: () => (spawned.length > 1 ? 60_000 : 50),
      spawn: (url) => {
        spawned.push({ terminated: false });
        if (spawned.length > 1) return new Worker(url);
        const w = {
          onmessage: null as ((ev: MessageEvent) => void) | null, onerror: null, unref() {},
          postMessage(m: { id: number; text: string }) {
            if (!m.text) queueMicrotask(() => w.onmessage?.({ data: { id: m.id, ids: new Int32Array(0) } } as MessageEvent));
          },
          terminate() {
            spawned[0]!.terminated = true;
          },
        };
        return w;
      },
    });
    const hanging = new Tokenizers({ offThread: hung, logger });
    const t = await hanging.get(model);
    const big = turn("word ".repeat(OFF_THREAD_BYTES / 4));
    const err = await t.encodePrompt(big).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: "backend_unavailable", message: "Tokenizing the prompt took too long; retry the request" });
    expect(failureOf(err)?.cause).toBe("tokenizer_timeout");
    expect(spawned[0]!.terminated).toBe(true);
    expect(logger.lines.find((l) => l.msg === "prompt tokenizing timed out")).toMatchObject({ model: model.id, reason: expect.stringContaining("no answer within 50 ms") });
    // The next large prompt goes to a fresh (real) worker and gets the right ids.
    expect(await t.encodePrompt(big)).toEqual(t.encodeText(big));
    expect(spawned).toHaveLength(2);
    hanging.close();
  });

  test("a tokenizer that cannot load answers 503 with a fixed text; the log has the loader's own words", async () => {
    const models = tempDir();
    writeFakeModel(models, "broken", fakeManifest("broken-tok-v1"));
    const broken = scanModels(models).models[0]!;
    expect(broken.dir).toBe(join(models, "broken"));
    const logger = memoryLogger();
    const err = await new Tokenizers({ logger }).get(broken).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 503, code: "backend_unavailable", message: "The tokenizer of 'broken-tok-v1' could not be loaded; retry later" });
    expect(logger.lines).toEqual([expect.objectContaining({ msg: "tokenizer failed to load", model: "broken-tok-v1", reason: expect.stringContaining('Tokenizer must contain a "model" property') })]);
  });
});

describe("a multimodal model's placeholders", () => {
  test("must be the tokenizer's own ids: a manifest that says otherwise is not served", async () => {
    const omni = scanModels(dirname(await tinyOmniModelDir())).models[0]!;
    const logger = memoryLogger();
    const ok = new Tokenizers({ logger });
    expect((await ok.get(omni)).specialTokens.get("<image>")).toBe(omni.media!.image!.tokenId);
    const wrong = { ...omni, id: "kiln-wrong-v1", media: { ...omni.media!, image: { ...omni.media!.image!, tokenId: 5 } } };
    const err = await new Tokenizers({ logger }).get(wrong).then(() => null, (e: unknown) => e);
    expect(failureOf(err)).toMatchObject({ cause: "tokenizer_unavailable" });
    expect(JSON.stringify(logger.lines)).toContain(`the media placeholder \\"<image>\\" is token ${omni.media!.image!.tokenId} in tokenizer.json, not 5`);
  });
});

describe("a multimodal model whose template takes only string content", () => {
  test("gets strings, its placeholders written inline where the media sit", async () => {
    const src = await presetModelDir("tiny-audio");
    const dir = join(tempDir("kiln-trim-template-"), "kiln-tiny-audio-v1");
    cpSync(src, dir, { recursive: true });
    // Llama-3-style, as Ultravox folders ship it: `| trim` fails on a list of parts.
    const cfgPath = join(dir, "tokenizer_config.json");
    const cfg = JSON.parse(readFileSync(cfgPath, "utf8"));
    cfg.chat_template = "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] | trim }}<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    writeFileSync(cfgPath, JSON.stringify(cfg));
    const model = scanModels(dirname(dir)).models[0]!;
    const tok = await new Tokenizers().get(model);
    const clip = { type: "media" as const, declared: "audio" as const, source: { kind: "url" as const, url: "x" }, at: "messages.0.content.1" };
    const conv = [{ role: "user" as const, parts: [{ type: "text" as const, text: " Hear this:" }, clip, { type: "text" as const, text: "? " }] }];
    expect(tok.renderChat(conv, null, {}, () => [{ kind: "audio" }])).toBe("<|im_start|>user\nHear this:<|audio|>?<|im_end|>\n<|im_start|>assistant\n");
    expect(tok.renderChat([{ role: "user", parts: [{ type: "text", text: "Hi" }] }], null, {}, () => [])).toBe("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  });
});
