// The database schema (drizzle). Later tables (files, responses, billing) reference teams and api_keys by id.
import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";

const now = sql`(unixepoch())`;

export const teams = sqliteTable("teams", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  name: text("name").notNull().unique(),
  /** Requests per minute shared by the team's keys; null = unlimited. */
  rpmLimit: integer("rpm_limit"),
  /** Tokens per minute shared by the team's keys; null = unlimited. */
  tpmLimit: integer("tpm_limit"),
  createdAt: integer("created_at").notNull().default(now),
  /** The pricing tier (config or the tiers table) whose RPM and TPM apply; rpm_limit / tpm_limit override it. Null: KILN_DEFAULT_TIER. */
  tier: text("tier"),
  /** Billing on: requests are charged to the team's billing account and refused (402) when it cannot cover them. */
  billingEnabled: integer("billing_enabled", { mode: "boolean" }).notNull().default(false),
  /** JSON array of the model ids the team may use; null = every model. */
  allowedModels: text("allowed_models"),
  /** JSON array of the endpoint families (chat, responses, messages, images, files) the team may call; null = all. */
  allowedEndpoints: text("allowed_endpoints"),
  /** JSON array of the service tiers (default, flex, priority, batch) the team may run in; null = all but priority. */
  serviceTiers: text("service_tiers"),
  /** JSON object of this team's own price factors by service tier, in thousandths; null = the server's (KILN_TIER_PRICES). */
  tierPrices: text("tier_prices"),
});

/** Named pricing tiers defined with the CLI (config may define more with KILN_TIERS; the database wins on a name). */
export const tiers = sqliteTable("tiers", {
  name: text("name").primaryKey(),
  /** Requests per minute; null = unlimited. */
  rpm: integer("rpm"),
  /** Tokens per minute; null = unlimited. */
  tpm: integer("tpm"),
  createdAt: integer("created_at").notNull().default(now),
});

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    teamId: integer("team_id").notNull().references(() => teams.id),
    name: text("name").notNull(),
    /** sha256 of the secret, hex; the secret itself is never stored. */
    secretHash: text("secret_hash").notNull(),
    /** Last four characters of the secret, to tell keys apart in listings. */
    hint: text("hint").notNull(),
    createdAt: integer("created_at").notNull().default(now),
    lastUsedAt: integer("last_used_at"),
    revokedAt: integer("revoked_at"),
    /** JSON array of the model ids this key may use (within its team's); null = no key-level restriction. */
    allowedModels: text("allowed_models"),
    /** JSON array of the endpoint families this key may call (within its team's); null = no key-level restriction. */
    allowedEndpoints: text("allowed_endpoints"),
  },
  (t) => [index("api_keys_team_idx").on(t.teamId)],
);

export const incidents = sqliteTable("incidents", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  title: text("title").notNull(),
  /** investigating | identified | monitoring | resolved */
  status: text("status").notNull(),
  message: text("message"),
  /** operational | degraded | outage: how the incident affects the service while it is open. */
  impact: text("impact").notNull().default("degraded"),
  createdAt: integer("created_at").notNull().default(now),
  updatedAt: integer("updated_at").notNull().default(now),
  resolvedAt: integer("resolved_at"),
});

export const usage = sqliteTable(
  "usage",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** The HTTP request's id (req_…): one row per request, so a ledger entry can point at exactly one. */
    requestId: text("request_id").notNull().unique(),
    teamId: integer("team_id").notNull().references(() => teams.id),
    keyId: integer("key_id").notNull().references(() => apiKeys.id),
    model: text("model").notNull(),
    /** The API family that served it: chat, responses, messages, images. */
    endpoint: text("endpoint").notNull(),
    inputTokens: integer("input_tokens").notNull(),
    /** All generated tokens, reasoning included (as OpenAI counts completion_tokens). */
    outputTokens: integer("output_tokens").notNull(),
    /** The part of output_tokens spent reasoning. */
    reasoningTokens: integer("reasoning_tokens").notNull().default(0),
    /** The part of input_tokens served from a prompt cache. */
    cachedTokens: integer("cached_tokens").notNull().default(0),
    /** Images delivered (the images endpoints), each priced per image; 0 for text generation. */
    images: integer("images").notNull().default(0),
    /** How the request ended; one of USAGE_STATUSES in usage-repo.ts. Rows from before the column read completed. */
    status: text("status").notNull().default("completed"),
    /** Price of the row in micro-units of the pricing currency (1 unit = 1,000,000), integer: see src/billing/cost.ts. */
    costMicros: integer("cost_micros").notNull().default(0),
    createdAt: integer("created_at").notNull().default(now),
    /** The service tier (lane) it ran in: default, flex, priority or batch. */
    serviceTier: text("service_tier").notNull().default("default"),
    /** The tier's price factor applied to cost_micros, in thousandths of the model's price (1000: list price). */
    priceFactorMilli: integer("price_factor_milli").notNull().default(1000),
    /** The batch a batch line's request belongs to (null for every other request): a batch's cost is its rows' sum. */
    batchId: text("batch_id"),
  },
  (t) => [index("usage_team_time_idx").on(t.teamId, t.createdAt), index("usage_batch_idx").on(t.batchId)],
);

/** A team's prepaid credit, opened when billing is first turned on (or by a first credit). Money is in micro-units (src/billing/money.ts). */
export const billingAccounts = sqliteTable("billing_accounts", {
  teamId: integer("team_id").primaryKey().references(() => teams.id),
  balanceMicros: integer("balance_micros").notNull().default(0),
  /** Set when the account lapsed (the operator says payment failed): every request of a billed team gets 402. */
  lapsedAt: integer("lapsed_at"),
  createdAt: integer("created_at").notNull().default(now),
  updatedAt: integer("updated_at").notNull().default(now),
});

/** Every change of a balance: credits from the operator, one charge per usage row of a billed team. */
export const ledger = sqliteTable(
  "ledger",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    teamId: integer("team_id").notNull().references(() => teams.id),
    /** credit | charge */
    kind: text("kind").notNull(),
    /** Signed micro-units: credits positive, charges negative. */
    amountMicros: integer("amount_micros").notNull(),
    balanceAfterMicros: integer("balance_after_micros").notNull(),
    /** The usage row a charge is for; null for credits. */
    requestId: text("request_id").unique().references(() => usage.requestId),
    note: text("note"),
    createdAt: integer("created_at").notNull().default(now),
  },
  (t) => [index("ledger_team_idx").on(t.teamId, t.id)],
);

/**
 * Stored Responses (store: true, and every background one). The request and the response object are kept as
 * JSON: the request to echo it, to rebuild a previous_response_id chain and to run a background job again after a
 * restart; the response as the client last saw it. No foreign key on previous_response_id: an ancestor may be
 * deleted or expire before its descendants, and a chain through it then reads as gone.
 */
export const responses = sqliteTable(
  "responses",
  {
    /** resp_… */
    id: text("id").primaryKey(),
    teamId: integer("team_id").notNull().references(() => teams.id),
    keyId: integer("key_id").notNull().references(() => apiKeys.id),
    model: text("model").notNull(),
    /** queued | in_progress | completed | incomplete | failed | cancelled */
    status: text("status").notNull(),
    background: integer("background", { mode: "boolean" }).notNull().default(false),
    previousResponseId: text("previous_response_id"),
    /** The validated request body without its input (the input items are rows of response_input_items). */
    requestJson: text("request_json").notNull(),
    /** The response object, rewritten at each status change. */
    responseJson: text("response_json").notNull(),
    /** Bytes this response holds across its rows (request, response, input items, events), for the storage bound. */
    storedBytes: integer("stored_bytes").notNull().default(0),
    /** How many times a background job was started; recovery after a crash reads it. */
    attempts: integer("attempts").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    /** Unix seconds after which the retention sweep deletes the response with its items and events. */
    expiresAt: integer("expires_at").notNull(),
    /** The replica running a queued or in-progress response (its random id), while its lease holds (responses-lease.ts). */
    leaseOwner: text("lease_owner"),
    /** Unix milliseconds until which the owner's lease holds; past it, another replica may take the response over. */
    leaseUntil: integer("lease_until"),
    /** Counts the claims of the response: a write checks owner and epoch, so a runner that lost its lease is refused. */
    leaseEpoch: integer("lease_epoch").notNull().default(0),
    /** The request id its usage row is settled under: kept across re-launches, so the job is charged once. */
    requestId: text("request_id"),
  },
  (t) => [
    index("responses_team_idx").on(t.teamId, t.createdAt),
    index("responses_expiry_idx").on(t.expiresAt),
    index("responses_status_idx").on(t.status),
  ],
);

/** A stored response's own input items, in request order; input_items pages over them. */
export const responseInputItems = sqliteTable(
  "response_input_items",
  {
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id, { onDelete: "cascade" }),
    position: integer("position").notNull(),
    /** The item's id (msg_…, fc_…, …): given by the client or minted when stored. */
    itemId: text("item_id").notNull(),
    itemJson: text("item_json").notNull(),
  },
  (t) => [primaryKey({ columns: [t.responseId, t.position] }), index("response_input_items_item_idx").on(t.responseId, t.itemId)],
);

/**
 * The reasoning items kiln produced in a stored response, by item id: a later request may send one back by its id
 * alone, and only text found here (or under kiln's seal) reaches the prompt as the model's own thinking.
 */
export const responseReasoningItems = sqliteTable(
  "response_reasoning_items",
  {
    /** rs_… */
    itemId: text("item_id").primaryKey(),
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id, { onDelete: "cascade" }),
  },
  (t) => [index("response_reasoning_items_response_idx").on(t.responseId)],
);

/** The stream events of a streamed or background response, by sequence_number, so a stream can be resumed. */
export const responseEvents = sqliteTable(
  "response_events",
  {
    responseId: text("response_id")
      .notNull()
      .references(() => responses.id, { onDelete: "cascade" }),
    sequence: integer("sequence").notNull(),
    eventJson: text("event_json").notNull(),
  },
  (t) => [primaryKey({ columns: [t.responseId, t.sequence] })],
);

/**
 * Uploaded files (POST /v1/files). A row is written only once the file's bytes are durable in the file storage
 * (src/files/), and deleting one removes its row, then its bytes. `seq` orders uploads within a second.
 */
export const files = sqliteTable(
  "files",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    /** file-… */
    id: text("id").notNull().unique(),
    teamId: integer("team_id").notNull().references(() => teams.id),
    /** The key that uploaded it. */
    keyId: integer("key_id").notNull().references(() => apiKeys.id),
    /** The client's name for the file, as sent; never used to name anything on disk. */
    filename: text("filename").notNull(),
    /** assistants | batch | fine-tune | vision | user_data | evals */
    purpose: text("purpose").notNull(),
    bytes: integer("bytes").notNull(),
    /** processed: a row exists only for a file stored whole. */
    status: text("status").notNull().default("processed"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("files_team_idx").on(t.teamId, t.createdAt, t.seq)],
);

/**
 * People who sign in to the dashboard (not API clients: no key is ever a login). An operator sees every team; a
 * member sees only `team_id`'s. Passwords are kept as Bun.password hashes (argon2id), never as text.
 */
export const dashboardUsers = sqliteTable(
  "dashboard_users",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    /** Lowercase; what the sign-in form asks for. */
    username: text("username").notNull().unique(),
    passwordHash: text("password_hash").notNull(),
    /** operator | member */
    role: text("role").notNull(),
    /** The member's team; null for operators. */
    teamId: integer("team_id").references(() => teams.id),
    createdAt: integer("created_at").notNull().default(now),
    lastLoginAt: integer("last_login_at"),
  },
  (t) => [index("dashboard_users_team_idx").on(t.teamId)],
);

/**
 * Signed-in dashboard sessions. The cookie holds a random token; only its sha256 is kept here, so a copy of the
 * database opens no session. Each session has its own CSRF token and a hard expiry; signing out deletes the row.
 */
export const dashboardSessions = sqliteTable(
  "dashboard_sessions",
  {
    /** sha256 of the cookie's token, hex. */
    tokenHash: text("token_hash").primaryKey(),
    userId: integer("user_id")
      .notNull()
      .references(() => dashboardUsers.id, { onDelete: "cascade" }),
    /** Sent back in every form of the session and compared on each state-changing request. */
    csrfToken: text("csrf_token").notNull(),
    createdAt: integer("created_at").notNull(),
    /** Unix seconds after which the session is refused (and swept). */
    expiresAt: integer("expires_at").notNull(),
  },
  (t) => [index("dashboard_sessions_user_idx").on(t.userId), index("dashboard_sessions_expiry_idx").on(t.expiresAt)],
);

/**
 * Batches of requests (POST /v1/batches): one row per batch, its lines in batch_lines. A batch runs on one replica at a
 * time, under a lease like a stored background response's (batch-leases-repo.ts).
 */
export const batches = sqliteTable(
  "batches",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    /** batch_… */
    id: text("id").notNull().unique(),
    teamId: integer("team_id").notNull().references(() => teams.id),
    /** The key that created it: its lines run as that key, as it is when each runs. */
    keyId: integer("key_id").notNull().references(() => apiKeys.id),
    /** /v1/chat/completions | /v1/responses | /v1/embeddings | /v1/completions */
    endpoint: text("endpoint").notNull(),
    inputFileId: text("input_file_id").notNull(),
    completionWindow: text("completion_window").notNull(),
    /** validating | failed | in_progress | finalizing | completed | expired | cancelling | cancelled */
    status: text("status").notNull(),
    /** JSON array of the validation errors ({line, code, message, param}); null when none. */
    errorsJson: text("errors_json"),
    /** JSON object of the client's metadata, or null. */
    metadataJson: text("metadata_json"),
    outputFileId: text("output_file_id"),
    errorFileId: text("error_file_id"),
    /** Lines in the input file (0 until validated). */
    total: integer("total").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    inProgressAt: integer("in_progress_at"),
    finalizingAt: integer("finalizing_at"),
    completedAt: integer("completed_at"),
    failedAt: integer("failed_at"),
    expiredAt: integer("expired_at"),
    cancellingAt: integer("cancelling_at"),
    cancelledAt: integer("cancelled_at"),
    /** The replica running it (its random id), while its lease holds. */
    leaseOwner: text("lease_owner"),
    /** Unix milliseconds (the database's clock) until which the owner's lease holds. */
    leaseUntil: integer("lease_until"),
    /** Counts the claims of the batch: a runner whose epoch is no longer the row's has lost it. */
    leaseEpoch: integer("lease_epoch").notNull().default(0),
  },
  (t) => [index("batches_team_idx").on(t.teamId, t.seq), index("batches_status_idx").on(t.status)],
);

/** A batch's lines, in input order: each runs at most once at a time and keeps its result when it ends. */
export const batchLines = sqliteTable(
  "batch_lines",
  {
    batchId: text("batch_id")
      .notNull()
      .references(() => batches.id, { onDelete: "cascade" }),
    /** 1-based line number in the input file. */
    line: integer("line").notNull(),
    customId: text("custom_id").notNull(),
    /** The request body, as validated. */
    bodyJson: text("body_json").notNull(),
    /** pending | running | done | failed */
    status: text("status").notNull().default("pending"),
    /** The output (or error) file's line for it, written when it ends. */
    resultJson: text("result_json"),
  },
  (t) => [primaryKey({ columns: [t.batchId, t.line] }), index("batch_lines_status_idx").on(t.batchId, t.status)],
);
