import { describe, expect, test } from "bun:test";
import { statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSealer, frame, SealError } from "../../../src/crypto/sealing.ts";
import { loadServerSecret, SECRET_FILE } from "../../../src/crypto/server-secret.ts";
import { tempDir } from "../../helpers/kiln.ts";
import { madeByV1 } from "../../helpers/v1-seal.ts";

describe("server secret", () => {
  test("created once, owner-only, and the same after a restart", () => {
    const dir = tempDir("kiln-secret-");
    const a = loadServerSecret(dir);
    expect(statSync(join(dir, SECRET_FILE)).mode & 0o777).toBe(0o600);
    expect(loadServerSecret(dir).equals(a)).toBe(true);
    expect(a.length).toBe(32);
  });

  test("a file of the wrong size is refused with the fix", () => {
    const dir = tempDir("kiln-secret-");
    writeFileSync(join(dir, SECRET_FILE), "short");
    expect(() => loadServerSecret(dir)).toThrow("remove it to have a new one made");
  });
});

describe("sealer", () => {
  const secret = loadServerSecret(tempDir("kiln-secret-"));
  const s = createSealer(secret);
  const other = createSealer(loadServerSecret(tempDir("kiln-secret-")));

  test("round trip, unicode included; every seal differs (fresh IV)", () => {
    const a = s.seal("thinking… 日本 🙂", "m-1");
    expect(a).toMatch(/^v2\.[A-Za-z0-9_-]+$/);
    expect(s.open(a, "m-1")).toBe("thinking… 日本 🙂");
    expect(s.seal("x", "m-1")).not.toBe(s.seal("x", "m-1"));
  });

  test("tampered, truncated, foreign-model, other-server and garbage payloads are refused", () => {
    const a = s.seal("secret plan", "m-1");
    const body = a.slice(3);
    const flipped = `v2.${body.slice(0, 10)}${body[10] === "A" ? "B" : "A"}${body.slice(11)}`;
    for (const bad of [flipped, a.slice(0, -4), a.slice(0, 8), "v1." + body, "v3." + body, "nonsense", ""]) expect(() => s.open(bad, "m-1")).toThrow(SealError);
    expect(() => s.open(a, "m-2")).toThrow(SealError);
    expect(() => other.open(a, "m-1")).toThrow(SealError);
  });

  test("signatures verify only for the same text, model and server", () => {
    const sig = s.sign("because", "m-1");
    expect(s.verify("because", sig, "m-1")).toBe(true);
    expect(s.verify("because!", sig, "m-1")).toBe(false);
    expect(s.verify("because", sig, "m-2")).toBe(false);
    expect(other.verify("because", sig, "m-1")).toBe(false);
    expect(s.verify("because", "", "m-1")).toBe(false);
  });

  test("the MAC's fields are length-prefixed: ('0x', 'm-1') and ('x', 'm-10') sign differently", () => {
    expect(frame("m-1", "0x").equals(frame("m-10", "x"))).toBe(false);
    const sig = s.sign("0x", "m-1");
    expect(s.sign("x", "m-10")).not.toBe(sig);
    expect(s.verify("x", sig, "m-10")).toBe(false);
    expect(s.verify("0x", sig, "m-1")).toBe(true);
  });

  test("seals and signatures of version 1 are refused (the caller answers its usual 400)", () => {
    const old = madeByV1(secret, "old thoughts", "m-1");
    expect(() => s.open(old.sealed, "m-1")).toThrow(SealError);
    expect(s.verify("old thoughts", old.signature, "m-1")).toBe(false);
    expect(s.sign("old thoughts", "m-1")).toMatch(/^v2\.[A-Za-z0-9_-]{43}$/);
  });
});
