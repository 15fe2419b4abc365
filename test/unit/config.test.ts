import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig, stripConfigFlags } from "../../src/config.ts";
import { urlOf } from "../../src/config-values.ts";
import { smallStepTokensFor } from "../../src/models/step-formats.ts";
import { readCpuInfo } from "../../src/native/cpu.ts";

describe("loadConfig", () => {
  test("defaults", () => {
    const c = loadConfig({}, []);
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(8080);
    expect(c.dataDir.endsWith("/data")).toBe(true);
    expect(c.modelsDir).toBe(`${c.dataDir}/models`);
    expect(c.logLevel).toBe("info");
    expect(Object.isFrozen(c)).toBe(true);
  });

  test("environment, then flags win", () => {
    const c = loadConfig({ KILN_PORT: "9000", KILN_HOST: "0.0.0.0" }, ["--port", "9100", "--log-level=debug"]);
    expect(c.port).toBe(9100);
    expect(c.host).toBe("0.0.0.0");
    expect(c.logLevel).toBe("debug");
  });

  test("a bad value names the variable", () => {
    expect(() => loadConfig({ KILN_PORT: "80x" }, [])).toThrow(new ConfigError('KILN_PORT must be a whole number, got "80x"'));
    expect(() => loadConfig({ KILN_PORT: "70000" }, [])).toThrow("KILN_PORT must be between 0 and 65535");
    expect(() => loadConfig({}, ["--log-level", "loud"])).toThrow("--log-level must be one of debug, info, warn, error");
    expect(() => loadConfig({}, ["--port"])).toThrow("--port needs a value");
  });

  test("edge limits and timeouts: defaults, overrides, bounds", () => {
    const c = loadConfig({}, []);
    expect([c.maxBodyBytes, c.bodyTimeoutMs, c.idleTimeoutS, c.shutdownGraceMs, c.firstKeyFile]).toEqual([72 * 1024 * 1024, 30_000, 10, 10_000, undefined]);
    const o = loadConfig({ KILN_MAX_BODY_BYTES: "1048576", KILN_SHUTDOWN_GRACE_MS: "0" }, ["--idle-timeout-s", "30", "--first-key-file=/tmp/k"]);
    expect([o.maxBodyBytes, o.shutdownGraceMs, o.idleTimeoutS, o.firstKeyFile]).toEqual([1048576, 0, 30, "/tmp/k"]);
    expect(() => loadConfig({ KILN_IDLE_TIMEOUT_S: "256" }, [])).toThrow("KILN_IDLE_TIMEOUT_S must be between 1 and 255");
    expect(() => loadConfig({ KILN_MAX_BODY_BYTES: "10" }, [])).toThrow("KILN_MAX_BODY_BYTES must be between 1024");
  });

  test("small-step tokens: the CPU's default, 0 turns it off, the flag wins, bounded", () => {
    expect(loadConfig({}, []).smallStepTokens).toBe(smallStepTokensFor(readCpuInfo()));
    expect(loadConfig({ KILN_SMALL_STEP_TOKENS: "0" }, []).smallStepTokens).toBe(0);
    expect(loadConfig({ KILN_SMALL_STEP_TOKENS: "0" }, ["--small-step-tokens", "2"]).smallStepTokens).toBe(2);
    expect(() => loadConfig({ KILN_SMALL_STEP_TOKENS: "5000" }, [])).toThrow("KILN_SMALL_STEP_TOKENS must be between 0 and 4096");
  });

  test("the worker load timeout: 300 s by default, 1 s to an hour", () => {
    expect(loadConfig({}, []).loadTimeoutS).toBe(300);
    expect(loadConfig({ KILN_LOAD_TIMEOUT_S: "20" }, []).loadTimeoutS).toBe(20);
    expect(() => loadConfig({}, ["--load-timeout-s", "0"])).toThrow("--load-timeout-s must be between 1 and 3600");
  });

  test("the /metrics admin token: unset by default; 16+ printable characters without spaces", () => {
    expect(loadConfig({}, []).metricsToken).toBeUndefined();
    expect(loadConfig({ KILN_METRICS_TOKEN: "s3cret-scrape-token-1" }, []).metricsToken).toBe("s3cret-scrape-token-1");
    expect(loadConfig({}, ["--metrics-token", "0123456789abcdef"]).metricsToken).toBe("0123456789abcdef");
    expect(() => loadConfig({ KILN_METRICS_TOKEN: "short" }, [])).toThrow("KILN_METRICS_TOKEN must be at least 16 printable characters");
    expect(() => loadConfig({ KILN_METRICS_TOKEN: "has a space in the token" }, [])).toThrow("KILN_METRICS_TOKEN must be at least 16");
  });

  test("trusted proxies: none by default; IP addresses only, comma-separated", () => {
    expect(loadConfig({}, []).trustedProxies).toEqual([]);
    expect(loadConfig({ KILN_TRUSTED_PROXIES: "10.0.0.1, FD00::1" }, []).trustedProxies).toEqual(["10.0.0.1", "fd00:0:0:0:0:0:0:1"]);
    expect(loadConfig({}, ["--trusted-proxies", "127.0.0.1"]).trustedProxies).toEqual(["127.0.0.1"]);
    expect(() => loadConfig({ KILN_TRUSTED_PROXIES: "10.0.0.1,lb.internal" }, [])).toThrow('KILN_TRUSTED_PROXIES must be IP addresses separated by commas, got "lb.internal"');
  });

  test("per-team metric series: off by default; a switch from the environment or a flag", () => {
    expect(loadConfig({}, []).metricsTeamLabels).toBe(false);
    expect(loadConfig({ KILN_METRICS_TEAM_LABELS: "1" }, []).metricsTeamLabels).toBe(true);
    expect(loadConfig({ KILN_METRICS_TEAM_LABELS: "on" }, ["--metrics-team-labels", "false"]).metricsTeamLabels).toBe(false);
    expect(() => loadConfig({ KILN_METRICS_TEAM_LABELS: "maybe" }, [])).toThrow('KILN_METRICS_TEAM_LABELS must be 1 or 0 (true/false, yes/no, on/off), got "maybe"');
  });

  test("Redis: unset by default (limits and holds in memory); redis:// or rediss:// with a host; the password is not echoed", () => {
    expect(loadConfig({}, []).redisUrl).toBeUndefined();
    expect(loadConfig({ KILN_REDIS_URL: "redis://127.0.0.1:6379" }, []).redisUrl).toBe("redis://127.0.0.1:6379");
    expect(loadConfig({}, ["--redis-url", "rediss://kiln:pw@cache.internal:6380/2"]).redisUrl).toBe("rediss://kiln:pw@cache.internal:6380/2");
    expect(() => loadConfig({ KILN_REDIS_URL: "http://cache:6379" }, [])).toThrow('KILN_REDIS_URL must be a redis:// or rediss:// URL with a host (and at most a database number as its path), got "http://cache:6379"');
    expect(() => loadConfig({ KILN_REDIS_URL: "cache:6379" }, [])).toThrow("KILN_REDIS_URL must be a redis:// or rediss:// URL");
    expect(() => loadConfig({}, ["--redis-url", "redis://:hunter2@cache/kiln"])).toThrow('got "redis://…@cache/kiln"');
    expect(() => loadConfig({}, ["--redis-url", "redis://:hunter2@cache/kiln"])).not.toThrow("hunter2");
  });

  test("Postgres: unset by default (SQLite in the data dir); postgres:// or postgresql:// with a host; credentials and options are not echoed", () => {
    expect(loadConfig({}, []).databaseUrl).toBeUndefined();
    expect(loadConfig({ KILN_DATABASE_URL: "postgres://kiln@127.0.0.1:5432/kiln" }, []).databaseUrl).toBe("postgres://kiln@127.0.0.1:5432/kiln");
    expect(loadConfig({}, ["--database-url", "postgresql://kiln:pw@db.internal/kiln?sslmode=require"]).databaseUrl).toBe("postgresql://kiln:pw@db.internal/kiln?sslmode=require");
    expect(() => loadConfig({ KILN_DATABASE_URL: "mysql://kiln:hunter2@db/kiln?password=hunter3" }, [])).toThrow('KILN_DATABASE_URL must be a postgres:// or postgresql:// URL with a host, got "mysql://db/kiln"');
    expect(() => loadConfig({}, ["--database-url", "postgres://kiln:hunter2@/kiln"])).toThrow("--database-url must be a postgres:// or postgresql:// URL");
    expect(() => loadConfig({}, ["--database-url", "postgres://kiln:hunter2@/kiln"])).not.toThrow("hunter2");
    expect(() => loadConfig({ KILN_DATABASE_URL: "db.internal:5432" }, [])).toThrow("KILN_DATABASE_URL must be a postgres:// or postgresql:// URL");
  });

  test("stripConfigFlags leaves the command and its arguments", () => {
    expect(stripConfigFlags(["--port", "1", "keys", "create", "--team", "a", "--data-dir=/x"])).toEqual(["keys", "create", "--team", "a"]);
  });

  test("built-in models: all three by default; a list, or none; an unknown id is refused naming it", () => {
    expect(loadConfig({}, []).builtinModels).toEqual(["kiln-tiny-v1", "kiln-tiny-omni-v1", "kiln-tiny-image-v1", "kiln-embed-tiny-v1"]);
    expect(loadConfig({ KILN_BUILTIN_MODELS: "kiln-embed-tiny-v1" }, []).builtinModels).toEqual(["kiln-embed-tiny-v1"]);
    expect(loadConfig({ KILN_BUILTIN_MODELS: "kiln-tiny-omni-v1" }, []).builtinModels).toEqual(["kiln-tiny-omni-v1"]);
    expect(loadConfig({}, ["--builtin-models", "none"]).builtinModels).toEqual([]);
    expect(() => loadConfig({ KILN_BUILTIN_MODELS: "kiln-tiny-v1,llama-3" }, [])).toThrow('KILN_BUILTIN_MODELS lists "llama-3", which is not a built-in model');
  });

  test("the intake budget: 512 MiB in flight and a 10 s wait by default; at least 1 MiB; a wait of 0 refuses at once", () => {
    const c = loadConfig({}, []);
    expect([c.intakeBudgetBytes, c.intakeWaitMs]).toEqual([512 * 1024 * 1024, 10_000]);
    const o = loadConfig({ KILN_INTAKE_BUDGET_BYTES: "104857600" }, ["--intake-wait-ms", "0"]);
    expect([o.intakeBudgetBytes, o.intakeWaitMs]).toEqual([104_857_600, 0]);
    expect(() => loadConfig({ KILN_INTAKE_BUDGET_BYTES: "1000" }, [])).toThrow("KILN_INTAKE_BUDGET_BYTES must be between 1048576");
  });

  test("media decoding: defaults, decimals for the frame rate, bounds", () => {
    const c = loadConfig({}, []);
    expect([c.mediaWorkers, c.mediaDecodeTimeoutMs, c.mediaMaxPixels, c.mediaMaxAudioS, c.mediaMaxVideoS, c.videoFps, c.videoMaxFrames, c.videoFrameSize]).toEqual([1, 180_000, 50_000_000, 1800, 300, 1, 32, 768]);
    const o = loadConfig({ KILN_VIDEO_FPS: "0.5", KILN_MEDIA_WORKERS: "2" }, ["--video-max-frames", "8", "--media-max-pixels=1000000"]);
    expect([o.videoFps, o.mediaWorkers, o.videoMaxFrames, o.mediaMaxPixels]).toEqual([0.5, 2, 8, 1_000_000]);
    expect(() => loadConfig({ KILN_VIDEO_FPS: "fast" }, [])).toThrow('KILN_VIDEO_FPS must be a number, got "fast"');
    expect(() => loadConfig({ KILN_VIDEO_FPS: "0" }, [])).toThrow("KILN_VIDEO_FPS must be between 0.01 and 60");
    // sharp refuses more than 0x3FFF × 0x3FFF pixels whatever kiln allows.
    expect(() => loadConfig({ KILN_MEDIA_MAX_PIXELS: "268402690" }, [])).toThrow("KILN_MEDIA_MAX_PIXELS must be between 1 and 268402689");
    expect(() => loadConfig({}, ["--media-decode-timeout-ms", "10"])).toThrow("--media-decode-timeout-ms must be between 1000");
  });
});

describe("urlOf", () => {
  test("a URL option's text, trimmed, as a URL; text that is none is a ConfigError in the option's own words", () => {
    expect(urlOf("  redis://cache:6379/2 ", "unused").href).toBe("redis://cache:6379/2");
    expect(() => urlOf("http://", 'KILN_X must be an http(s) URL, got "http://"')).toThrow(new ConfigError('KILN_X must be an http(s) URL, got "http://"'));
    expect(() => loadConfig({ KILN_WEB_SEARCH_URL: "not a url" }, [])).toThrow('KILN_WEB_SEARCH_URL must be an http(s) URL, got "not a url"');
  });
});
