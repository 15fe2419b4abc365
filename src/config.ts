// One frozen, validated configuration from KILN_* environment variables and matching CLI flags.
import { DEVICE_SETTINGS, type DeviceSetting } from "./devices/device-choice.ts";
import { availableParallelism } from "node:os";
import { BUILTIN_MODEL_IDS } from "./modelgen/install.ts";
import { resolve } from "node:path";
import { smallStepTokensFor } from "./models/step-formats.ts";
import { readCpuInfo } from "./native/cpu.ts";
import type { Tier } from "./ratelimit/tiers.ts";
import { DEFAULT_TIER_PRICES, type TierPrices } from "./billing/tier-prices.ts";
import { addressList, baseUrl, builtinList, ConfigError, decimal, flag, hostPatterns, int, nonEmpty, postgresUrl, redisUrl, secret, tierList, tierName, tierPrices } from "./config-values.ts";
import { bucketName, checkS3Options, originUrl, regionName } from "./config-s3.ts";

export { ConfigError };

export type LogLevel = "debug" | "info" | "warn" | "error";

export interface Config {
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  /** Postgres that holds kiln's data (postgres:// or postgresql://); unset: SQLite in the data dir. */
  readonly databaseUrl?: string;
  readonly modelsDir: string;
  readonly logLevel: LogLevel;
  /** Inference worker threads; each loads its own copy of the models. */
  readonly workers: number;
  /** ONNX Runtime intra-op threads per worker. */
  readonly threads: number;
  /** Where text models run: cpu, webgpu, or auto (the GPU when a hardware adapter passes the probe); kiln.json may override. */
  readonly device: DeviceSetting;
  /** Forward passes of at most this many tokens run on q4 weights beside an int8 default (0: one format only). */
  readonly smallStepTokens: number;
  /** Whether text workers keep prompt prefixes' KV for later requests (workers/text/prefix-cache.ts). */
  readonly prefixCache: boolean;
  /** Bytes of prefix KV each text worker may hold; unset: prefixCacheBytes() from the models' size and the box's memory. */
  readonly prefixCacheMb?: number;
  /** Who shares cached prefixes: each team its own (plus the models' declared public prefixes), or every team. */
  readonly prefixSharing: "team" | "all";
  /** A worker that has not loaded its model within this many seconds failed: the model answers 503 backend_unavailable. */
  readonly loadTimeoutS: number;
  /** Active + queued generation requests admitted before 503 service_overloaded. */
  readonly maxQueue: number;
  /** The percentage of maxQueue kept for interactive (default and priority) requests: flex and batch work never holds it. */
  readonly interactiveReserve: number;
  /** Non-streaming requests running longer than this get 504 gateway_timeout. */
  readonly requestTimeoutMs: number;
  /** JSON request bodies larger than this get 413 payload_too_large, cut off while they are read. */
  readonly maxBodyBytes: number;
  /** A request body not fully received within this gets 408 and the connection closes. */
  readonly bodyTimeoutMs: number;
  /** Keep-alive connections idle this long are closed (seconds; Bun's own limit is 255). */
  readonly idleTimeoutS: number;
  /** On SIGTERM/SIGINT, running requests get this long to finish while new ones get 503 server_shutting_down. */
  readonly shutdownGraceMs: number;
  /**
   * On SIGTERM/SIGINT, /v1/status says is_alive: false for this long while new requests are still served, so a load
   * balancer's health check takes the replica out before it refuses any; then the drain (shutdownGraceMs) begins.
   */
  readonly drainNoticeMs: number;
  /** Where the first start writes the first API key (mode 0600) instead of printing it; unset prints it. */
  readonly firstKeyFile?: string;
  /** Base URL of the SearXNG instance the built-in web_search tool queries; unset: web_search is not offered (forcing it is a 400). */
  readonly webSearchUrl?: string;
  /** One search (request and reading its answer) gives up after this long and fails. */
  readonly webSearchTimeoutMs: number;
  /** Most results one search hands the model. */
  readonly webSearchMaxResults: number;
  /** A search answer larger than this is cut off while it is read, and the search fails. */
  readonly webSearchMaxBytes: number;
  /** Most web searches one response may run. */
  readonly webSearchMaxCalls: number;
  /** Bearer token that lets a non-loopback scraper read /metrics; unset: loopback peers only. */
  readonly metricsToken?: string;
  /** Metrics carry a team label (one series per team ever served); off: series summed over teams. */
  readonly metricsTeamLabels: boolean;
  /** Peers (a load balancer, a reverse proxy) whose X-Forwarded-For names the real client; empty: the socket's peer is the client. */
  readonly trustedProxies: readonly string[];
  /** Pricing tiers defined in config (the tiers table may add more, and wins on a name both define). */
  readonly tiers: readonly Tier[];
  /** The tier of teams that name none; unset: such teams have only their own limits. */
  readonly defaultTier?: string;
  /** Each service tier's price factor in thousandths of the model's price (src/billing/tier-prices.ts). */
  readonly tierPrices: TierPrices;
  /** Redis that keeps rate limits and billing holds for every replica and carries live responses between them (redis:// or rediss://); unset: this process's memory. */
  readonly redisUrl?: string;
  /** Stored responses (with their input items and events) are deleted this many days after they were created. */
  readonly responseRetentionDays: number;
  /** How long a replica's lease on a stored response it runs lasts past its last renewal (Postgres; lease-timing.ts). */
  readonly leaseMs: number;
  /** Most bytes one stored response may hold (request, input items, response); above it, 413 payload_too_large. */
  readonly maxStoredResponseBytes: number;
  /** An inline (base64) medium larger than this, decoded, is a 400 naming the item: the spec's 50 MB. */
  readonly maxInlineMediaBytes: number;
  /** Most media items (images, audio, video, files) one request may carry. */
  readonly maxMediaPerRequest: number;
  /** An uploaded file referenced as media (file_id) larger than this is not decoded: a 400 naming the item. */
  readonly maxMediaFileBytes: number;
  /** The operator's content policy file (src/media/content-policy.ts); unset: nothing is refused. */
  readonly contentPolicyFile?: string;
  /** Remote media URLs: only hosts matching these patterns are fetched (normalised; empty: any public host). */
  readonly fetchAllow: readonly string[];
  /** One remote media fetch (robots.txt, redirects, body) gives up after this long. */
  readonly fetchTimeoutMs: number;
  /** A remote medium larger than this is refused (declared) or cut off while read. */
  readonly fetchMaxBytes: number;
  /** Redirects one remote media fetch follows, each vetted like the first URL. */
  readonly fetchMaxRedirects: number;
  /** Remote media fetches honour robots.txt (RFC 9309) for the user agent "kiln". */
  readonly fetchRobots: boolean;
  /** Largest file POST /v1/files takes; one byte more is a 400 and nothing is kept. */
  readonly maxFileBytes: number;
  /** An upload (the whole multipart body) not received within this gets 408. */
  readonly uploadTimeoutMs: number;
  /** Uploaded files go to this bucket of an S3-compatible store (replicas share it); unset: the data dir's files/. */
  readonly s3Bucket?: string;
  /** The store's origin (MinIO, Ceph, R2…); unset: AWS S3 in s3Region. */
  readonly s3Endpoint?: string;
  readonly s3Region: string;
  readonly s3AccessKeyId?: string;
  /** Never logged, never echoed in an error. */
  readonly s3SecretAccessKey?: string;
  /** Media bytes in flight in intake, all requests together (an item larger than this is read alone). */
  readonly intakeBudgetBytes: number;
  /** How long a request waits for intake bytes before 503 service_overloaded. */
  readonly intakeWaitMs: number;
  /** Worker threads decoding images, audio and video off the event loop. */
  readonly mediaWorkers: number;
  /** Decodes waiting for a worker beyond the running ones; one more is refused at once with 503 service_overloaded. */
  readonly mediaMaxQueue: number;
  /** One decode running longer than this fails (the medium is undecodable) and its worker is replaced. */
  readonly mediaDecodeTimeoutMs: number;
  /** Images (and video frames) with more pixels are refused from their header, before decoding: decompression bombs. */
  readonly mediaMaxPixels: number;
  /** Longest audio decoded, in seconds. */
  readonly mediaMaxAudioS: number;
  /** Longest video decoded, in seconds. */
  readonly mediaMaxVideoS: number;
  /** Video frames sampled per second... */
  readonly videoFps: number;
  /** ...and at most this many per video (a longer video is sampled evenly at a lower rate). */
  readonly videoMaxFrames: number;
  /** Sampled frames are scaled down to fit this many pixels on their longer side. */
  readonly videoFrameSize: number;
  /** Built-in models installed into the models dir at start (see BUILTIN_MODEL_IDS). */
  readonly builtinModels: readonly string[];
  /** A .gguf file or Hugging Face folder imported into the models dir at start (once) and served; null: none. */
  readonly model: string | null;
}

interface Option {
  key: keyof Config;
  env: string;
  flag: string;
  help: string;
  parse: (raw: string, name: string) => unknown;
}

const LEVELS: LogLevel[] = ["debug", "info", "warn", "error"];

export const OPTIONS: Option[] = [
  { key: "host", env: "KILN_HOST", flag: "--host", help: "address to listen on", parse: nonEmpty },
  { key: "port", env: "KILN_PORT", flag: "--port", help: "TCP port (0 picks a free one)", parse: int(0, 65535) },
  { key: "dataDir", env: "KILN_DATA_DIR", flag: "--data-dir", help: "database, files and unpacked runtime", parse: nonEmpty },
  { key: "databaseUrl", env: "KILN_DATABASE_URL", flag: "--database-url", help: "Postgres for kiln's data, shared by replicas (unset: SQLite in the data dir)", parse: postgresUrl },
  { key: "modelsDir", env: "KILN_MODELS_DIR", flag: "--models-dir", help: "model folders (default <data dir>/models)", parse: nonEmpty },
  {
    key: "logLevel", env: "KILN_LOG_LEVEL", flag: "--log-level", help: "debug | info | warn | error",
    parse: (raw, name) => {
      if (!LEVELS.includes(raw as LogLevel)) throw new ConfigError(`${name} must be one of ${LEVELS.join(", ")}, got "${raw}"`);
      return raw;
    },
  },
  { key: "workers", env: "KILN_WORKERS", flag: "--workers", help: "inference worker threads", parse: int(1, 64) },
  { key: "threads", env: "KILN_THREADS", flag: "--threads", help: "ONNX Runtime threads per worker", parse: int(1, 256) },
  {
    key: "device", env: "KILN_DEVICE", flag: "--device", help: "cpu | webgpu | auto: where models run (auto: a GPU that passes the probe)",
    parse: (raw, name) => {
      if (!DEVICE_SETTINGS.includes(raw as DeviceSetting)) throw new ConfigError(`${name} must be one of ${DEVICE_SETTINGS.join(", ")}, got "${raw}"`);
      return raw;
    },
  },
  {
    key: "smallStepTokens", env: "KILN_SMALL_STEP_TOKENS", flag: "--small-step-tokens",
    help: "passes of ≤ this many tokens run on q4 beside int8 (0 = off; default follows the CPU)", parse: int(0, 4096),
  },
  { key: "prefixCache", env: "KILN_PREFIX_CACHE", flag: "--prefix-cache", help: "1: reuse cached prompt prefixes across requests (0 = off)", parse: flag },
  { key: "prefixCacheMb", env: "KILN_PREFIX_CACHE_MB", flag: "--prefix-cache-mb", help: "MiB of prefix KV per text worker (default from model size and memory)", parse: int(1, 1 << 20) },
  {
    key: "prefixSharing", env: "KILN_PREFIX_SHARING", flag: "--prefix-sharing", help: "team | all: who shares cached prefixes (team: only declared public ones cross teams)",
    parse: (raw, name) => {
      if (raw !== "team" && raw !== "all") throw new ConfigError(`${name} must be team or all, got "${raw}"`);
      return raw;
    },
  },
  { key: "loadTimeoutS", env: "KILN_LOAD_TIMEOUT_S", flag: "--load-timeout-s", help: "a worker not loaded by then failed (503 backend_unavailable)", parse: int(1, 3600) },
  { key: "maxQueue", env: "KILN_MAX_QUEUE", flag: "--max-queue", help: "active + queued requests before 503", parse: int(1, 100000) },
  {
    key: "interactiveReserve", env: "KILN_INTERACTIVE_RESERVE", flag: "--interactive-reserve",
    help: "percent of the queue budget flex and batch work never takes (kept for interactive requests)", parse: int(0, 90),
  },
  { key: "requestTimeoutMs", env: "KILN_REQUEST_TIMEOUT_MS", flag: "--request-timeout-ms", help: "non-streaming time limit", parse: int(1000, 86_400_000) },
  { key: "maxBodyBytes", env: "KILN_MAX_BODY_BYTES", flag: "--max-body-bytes", help: "largest JSON request body (413 above)", parse: int(1024, 1024 * 1024 * 1024) },
  { key: "bodyTimeoutMs", env: "KILN_BODY_TIMEOUT_MS", flag: "--body-timeout-ms", help: "time to receive a request body (408 after)", parse: int(100, 3_600_000) },
  { key: "idleTimeoutS", env: "KILN_IDLE_TIMEOUT_S", flag: "--idle-timeout-s", help: "idle keep-alive connections close after this", parse: int(1, 255) },
  { key: "firstKeyFile", env: "KILN_FIRST_KEY_FILE", flag: "--first-key-file", help: "write the first API key to this new file (0600)", parse: nonEmpty },
  { key: "shutdownGraceMs", env: "KILN_SHUTDOWN_GRACE_MS", flag: "--shutdown-grace-ms", help: "drain time for running requests on SIGTERM", parse: int(0, 3_600_000) },
  {
    key: "drainNoticeMs", env: "KILN_DRAIN_NOTICE_MS", flag: "--drain-notice-ms",
    help: "on SIGTERM, time is_alive is false while new requests are still served (a load balancer's health check interval × fall)", parse: int(0, 600_000),
  },
  { key: "webSearchUrl", env: "KILN_WEB_SEARCH_URL", flag: "--web-search-url", help: "SearXNG base URL for the built-in web_search tool", parse: baseUrl },
  { key: "webSearchTimeoutMs", env: "KILN_WEB_SEARCH_TIMEOUT_MS", flag: "--web-search-timeout-ms", help: "time limit of one web search", parse: int(100, 120_000) },
  { key: "webSearchMaxResults", env: "KILN_WEB_SEARCH_MAX_RESULTS", flag: "--web-search-max-results", help: "results one web search gives the model", parse: int(1, 20) },
  { key: "webSearchMaxBytes", env: "KILN_WEB_SEARCH_MAX_BYTES", flag: "--web-search-max-bytes", help: "largest search answer read", parse: int(1024, 64 * 1024 * 1024) },
  { key: "webSearchMaxCalls", env: "KILN_WEB_SEARCH_MAX_CALLS", flag: "--web-search-max-calls", help: "web searches per response", parse: int(1, 10) },
  { key: "metricsToken", env: "KILN_METRICS_TOKEN", flag: "--metrics-token", help: "bearer token for /metrics from non-loopback peers", parse: secret },
  { key: "trustedProxies", env: "KILN_TRUSTED_PROXIES", flag: "--trusted-proxies", help: "comma-separated proxy addresses whose X-Forwarded-For names the client", parse: addressList },
  { key: "metricsTeamLabels", env: "KILN_METRICS_TEAM_LABELS", flag: "--metrics-team-labels", help: "1: per-team metric series (one per team served)", parse: flag },
  { key: "tiers", env: "KILN_TIERS", flag: "--tiers", help: "pricing tiers, name:rpm:tpm,… (- = unlimited)", parse: tierList },
  { key: "defaultTier", env: "KILN_DEFAULT_TIER", flag: "--default-tier", help: "tier of teams that have none", parse: tierName },
  { key: "tierPrices", env: "KILN_TIER_PRICES", flag: "--tier-prices", help: "service tiers' price factors, tier:factor,… (default batch:0.5,flex:0.5,priority:2)", parse: tierPrices },
  { key: "redisUrl", env: "KILN_REDIS_URL", flag: "--redis-url", help: "Redis for rate limits, billing holds and live responses shared by replicas (unset: in memory)", parse: redisUrl },
  { key: "responseRetentionDays", env: "KILN_RESPONSE_RETENTION_DAYS", flag: "--response-retention-days", help: "days stored responses are kept", parse: int(1, 3650) },
  { key: "leaseMs", env: "KILN_LEASE_MS", flag: "--lease-ms", help: "lease on a stored response a replica runs (Postgres); renewed at 30%, checked at 20%", parse: int(1000, 600_000) },
  {
    key: "maxStoredResponseBytes", env: "KILN_MAX_STORED_RESPONSE_BYTES", flag: "--max-stored-response-bytes",
    help: "largest stored response (413 above)", parse: int(1024, 1024 * 1024 * 1024),
  },
  // Media intake (src/media/intake.ts).
  {
    key: "maxInlineMediaBytes", env: "KILN_MAX_INLINE_MEDIA_BYTES", flag: "--max-inline-media-bytes",
    help: "largest inline (base64) medium, decoded bytes (400 above)", parse: int(1024, 1024 * 1024 * 1024),
  },
  {
    key: "maxMediaFileBytes", env: "KILN_MAX_MEDIA_FILE_BYTES", flag: "--max-media-file-bytes",
    help: "largest uploaded file decoded as media (400 above)", parse: int(1024, 4 * 1024 * 1024 * 1024),
  },
  { key: "maxMediaPerRequest", env: "KILN_MAX_MEDIA_PER_REQUEST", flag: "--max-media-per-request", help: "media items one request may carry", parse: int(1, 1024) },
  { key: "contentPolicyFile", env: "KILN_CONTENT_POLICY", flag: "--content-policy", help: "JSON file of refused prompt patterns and media hashes", parse: nonEmpty },
  { key: "fetchAllow", env: "KILN_FETCH_ALLOW", flag: "--fetch-allow", help: "remote media hosts allowed, a.example.com,*.cdn.example.org (unset = any public host)", parse: hostPatterns },
  { key: "fetchTimeoutMs", env: "KILN_FETCH_TIMEOUT_MS", flag: "--fetch-timeout-ms", help: "time limit of one remote media fetch", parse: int(100, 300_000) },
  { key: "fetchMaxBytes", env: "KILN_FETCH_MAX_BYTES", flag: "--fetch-max-bytes", help: "largest remote medium fetched", parse: int(1024, 1024 * 1024 * 1024) },
  { key: "fetchMaxRedirects", env: "KILN_FETCH_MAX_REDIRECTS", flag: "--fetch-max-redirects", help: "redirects one remote media fetch follows", parse: int(0, 20) },
  { key: "fetchRobots", env: "KILN_FETCH_ROBOTS", flag: "--fetch-robots", help: "0: remote media fetches ignore robots.txt", parse: flag },
  { key: "maxFileBytes", env: "KILN_MAX_FILE_BYTES", flag: "--max-file-bytes", help: "largest file upload (400 above)", parse: int(1024, 64 * 1024 * 1024 * 1024) },
  { key: "uploadTimeoutMs", env: "KILN_UPLOAD_TIMEOUT_MS", flag: "--upload-timeout-ms", help: "time to receive a file upload (408 after)", parse: int(1000, 86_400_000) },
  // Files in an S3-compatible object store (src/files/s3-storage.ts).
  { key: "s3Bucket", env: "KILN_S3_BUCKET", flag: "--s3-bucket", help: "keep uploaded files in this S3 bucket (unset: on disk)", parse: bucketName },
  { key: "s3Endpoint", env: "KILN_S3_ENDPOINT", flag: "--s3-endpoint", help: "S3-compatible endpoint, http(s)://host[:port] (unset: AWS)", parse: originUrl },
  { key: "s3Region", env: "KILN_S3_REGION", flag: "--s3-region", help: "S3 region", parse: regionName },
  { key: "s3AccessKeyId", env: "KILN_S3_ACCESS_KEY_ID", flag: "--s3-access-key-id", help: "S3 access key id", parse: nonEmpty },
  { key: "s3SecretAccessKey", env: "KILN_S3_SECRET_ACCESS_KEY", flag: "--s3-secret-access-key", help: "S3 secret key (prefer the environment: flags show in ps)", parse: nonEmpty },
  {
    key: "intakeBudgetBytes", env: "KILN_INTAKE_BUDGET_BYTES", flag: "--intake-budget-bytes",
    help: "media bytes read or decoding at once, all requests together (wait, then 503)", parse: int(1024 * 1024, 64 * 1024 * 1024 * 1024),
  },
  { key: "intakeWaitMs", env: "KILN_INTAKE_WAIT_MS", flag: "--intake-wait-ms", help: "time a request waits for intake bytes (503 after)", parse: int(0, 600_000) },
  { key: "mediaWorkers", env: "KILN_MEDIA_WORKERS", flag: "--media-workers", help: "worker threads decoding images, audio and video", parse: int(1, 16) },
  { key: "mediaMaxQueue", env: "KILN_MEDIA_MAX_QUEUE", flag: "--media-max-queue", help: "media decodes waiting for a worker (503 beyond)", parse: int(0, 4096) },
  { key: "mediaDecodeTimeoutMs", env: "KILN_MEDIA_DECODE_TIMEOUT_MS", flag: "--media-decode-timeout-ms", help: "time limit of one media decode", parse: int(1000, 3_600_000) },
  // sharp's own ceiling is 0x3FFF × 0x3FFF pixels.
  { key: "mediaMaxPixels", env: "KILN_MEDIA_MAX_PIXELS", flag: "--media-max-pixels", help: "most pixels an image may have (refused from its header)", parse: int(1, 0x3fff * 0x3fff) },
  { key: "mediaMaxAudioS", env: "KILN_MEDIA_MAX_AUDIO_S", flag: "--media-max-audio-s", help: "longest audio decoded (seconds)", parse: int(1, 86_400) },
  { key: "mediaMaxVideoS", env: "KILN_MEDIA_MAX_VIDEO_S", flag: "--media-max-video-s", help: "longest video decoded (seconds)", parse: int(1, 86_400) },
  { key: "videoFps", env: "KILN_VIDEO_FPS", flag: "--video-fps", help: "video frames sampled per second", parse: decimal(0.01, 60) },
  { key: "videoMaxFrames", env: "KILN_VIDEO_MAX_FRAMES", flag: "--video-max-frames", help: "most frames sampled from one video", parse: int(1, 1024) },
  { key: "videoFrameSize", env: "KILN_VIDEO_FRAME_SIZE", flag: "--video-frame-size", help: "longer side of sampled frames (pixels)", parse: int(16, 4096) },
  { key: "builtinModels", env: "KILN_BUILTIN_MODELS", flag: "--builtin-models", help: "built-in models built into the models dir at start (comma list, or none)", parse: builtinList },
  { key: "model", env: "KILN_MODEL", flag: "--model", help: "a .gguf file or Hugging Face folder to serve (imported into the models dir on the first start)", parse: nonEmpty },
];

export function defaults(): Omit<Config, "modelsDir"> & { modelsDir?: string } {
  const cores = Math.max(1, availableParallelism());
  return {
    host: "127.0.0.1",
    port: 8080,
    dataDir: "./data",
    logLevel: "info",
    // One worker using every core beats several workers competing for two cores.
    workers: 1,
    threads: cores,
    device: "auto",
    smallStepTokens: smallStepTokensFor(readCpuInfo()),
    prefixCache: true,
    prefixSharing: "team",
    loadTimeoutS: 300,
    maxQueue: 256,
    interactiveReserve: 25,
    requestTimeoutMs: 300_000,
    // Room for the spec's 50 MB of inline media as base64 (4/3 of it) beside the rest of the request.
    maxBodyBytes: 72 * 1024 * 1024,
    bodyTimeoutMs: 30_000,
    idleTimeoutS: 10,
    shutdownGraceMs: 10_000,
    drainNoticeMs: 0,
    webSearchTimeoutMs: 5000,
    webSearchMaxResults: 5,
    webSearchMaxBytes: 1024 * 1024,
    webSearchMaxCalls: 3,
    metricsTeamLabels: false,
    trustedProxies: [],
    tiers: [],
    tierPrices: DEFAULT_TIER_PRICES,
    responseRetentionDays: 30,
    leaseMs: 5_000,
    maxStoredResponseBytes: 16 * 1024 * 1024,
    maxInlineMediaBytes: 50_000_000,
    maxMediaPerRequest: 16,
    // The decoder holds a medium twice (kiln's copy and ffmpeg.wasm's): 256 MiB is 300 s of 1080p at about 7 Mbit/s.
    maxMediaFileBytes: 256 * 1024 * 1024,
    fetchAllow: [],
    fetchTimeoutMs: 10_000,
    // The spec's limit on inline media: a fetched medium may be as large as one sent inline.
    fetchMaxBytes: 50_000_000,
    fetchMaxRedirects: 5,
    fetchRobots: true,
    maxFileBytes: 1024 * 1024 * 1024,
    // 1 GiB at 20 Mbit/s takes about 7 minutes: an hour leaves room for slow links.
    uploadTimeoutMs: 3_600_000,
    s3Region: "us-east-1",
    // Two of the largest media files (KILN_MAX_MEDIA_FILE_BYTES) at once; a burst past it waits, then gets 503.
    intakeBudgetBytes: 512 * 1024 * 1024,
    intakeWaitMs: 10_000,
    mediaWorkers: 1,
    // Media is decoded before admission: this bounds what a burst of requests can pile up (the bytes they hold).
    mediaMaxQueue: 16,
    // Long enough for a 300 s 1080p video in ffmpeg.wasm (about 65 frames a second here).
    mediaDecodeTimeoutMs: 180_000,
    // Above any phone photo (48-50 MP); a vision encoder scales far below this anyway.
    mediaMaxPixels: 50_000_000,
    mediaMaxAudioS: 1800,
    mediaMaxVideoS: 300,
    videoFps: 1,
    videoMaxFrames: 32,
    videoFrameSize: 768,
    builtinModels: BUILTIN_MODEL_IDS,
    model: null,
  };
}

/** Builds the config: defaults, then environment, then flags (flags win). Throws ConfigError naming the bad input. */
export function loadConfig(env: Record<string, string | undefined>, argv: string[]): Config {
  const values: Record<string, unknown> = { ...defaults() };
  for (const opt of OPTIONS) {
    const raw = env[opt.env];
    if (raw !== undefined) values[opt.key] = opt.parse(raw, opt.env);
  }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const opt = OPTIONS.find((o) => o.flag === flag);
    if (!opt) continue;
    const raw = inline ?? argv[++i];
    if (raw === undefined) throw new ConfigError(`${opt.flag} needs a value`);
    values[opt.key] = opt.parse(raw, opt.flag);
  }
  checkS3Options(values as Partial<Config>);
  const dataDir = resolve(values.dataDir as string);
  const modelsDir = resolve((values.modelsDir as string | undefined) ?? `${dataDir}/models`);
  return Object.freeze({ ...(values as unknown as Config), dataDir, modelsDir });
}

/** argv with the config flags (and their values) removed, leaving the command and its own arguments. */
export function stripConfigFlags(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const flag = arg.includes("=") ? arg.slice(0, arg.indexOf("=")) : arg;
    if (OPTIONS.some((o) => o.flag === flag)) {
      if (!arg.includes("=")) i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}
