// Builds the core's intake from kiln's parts: the media decoder (worker threads), the fetch policy over the network
// (injectable for tests), the team's uploaded files, and the operator's content policy, under the configured limits and
// one budget of intake bytes in flight for the whole server.
import { familyRefusal, restrictionOf } from "../access/rules.ts";
import type { Config } from "../config.ts";
import { findActiveKeyWithTeam } from "../db/keys-repo.ts";
import { ApiError } from "../errors/api-error.ts";
import type { Db } from "../db/client.ts";
import { readTeamFile } from "../files/read-team-file.ts";
import type { FileStorage } from "../files/storage.ts";
import type { CoreIntake } from "../inference/core-deps.ts";
import type { Logger } from "../log/logger.ts";
import type { ContentPolicy } from "./content-policy.ts";
import { createMediaDecoder } from "./decode/decoder.ts";
import { defaultNet } from "./fetch-net.ts";
import { fetchPolicyFromConfig, fetchRemote, type FetchPolicy, type Net } from "./fetch-policy.ts";
import { checkPrompt } from "./content-policy.ts";
import { takeImages, takeMedia } from "./intake.ts";
import { IntakeBudget } from "./intake-budget.ts";
import type { IntakeDeps } from "./intake-deps.ts";

export interface MediaIntakeOptions {
  config: Config;
  db: Db;
  files: FileStorage;
  /** The operator's content policy (loadContentPolicy, before anything else starts). */
  policy: ContentPolicy;
  logger?: Logger;
  /** The network remote media come over (tests inject a guarded one). */
  net?: Net;
  /** Changes to the fetch policy the config gives (tests lift the loopback ban here, and nowhere else). */
  fetchPolicy?: Partial<FetchPolicy>;
}

export interface MediaIntake {
  intake: CoreIntake;
  /** Stops the decoder's workers. */
  close(): Promise<void>;
}

/** The decoder's workers start on first use. */
export function createMediaIntake(o: MediaIntakeOptions): MediaIntake {
  const decoder = createMediaDecoder(o.config, o.logger ? { logger: o.logger } : {});
  const fetchPolicy = { ...fetchPolicyFromConfig(o.config), ...o.fetchPolicy };
  const net = o.net ?? defaultNet;
  const deps: IntakeDeps = {
    decode: (bytes, want, signal) => decoder.decode(bytes, want, signal),
    fetch: async (url, signal) => (await fetchRemote(url, fetchPolicy, net, signal)).bytes,
    openFile: async (who, fileId, maxBytes) => {
      // The key's permissions as they are now: a key without the files family cannot read files through a prompt either.
      const found = await findActiveKeyWithTeam(o.db, who.keyId);
      if (!found) throw ApiError.unauthorized();
      const refusal = familyRefusal({ key: restrictionOf(found.key), team: restrictionOf(found.team) }, "files", " (a file_id in the request)");
      if (refusal) throw refusal;
      return readTeamFile({ db: o.db, files: o.files }, who.teamId, fileId, maxBytes);
    },
    budget: new IntakeBudget(o.config.intakeBudgetBytes, o.config.intakeWaitMs),
    policy: o.policy,
    inlineMaxBytes: o.config.maxInlineMediaBytes,
    fileMaxBytes: o.config.maxMediaFileBytes,
    fetchMaxBytes: fetchPolicy.maxBytes,
    maxParts: o.config.maxMediaPerRequest,
    maxTotalBytes: o.config.maxMediaFileBytes,
  };
  return {
    intake: {
      prepare: (request, model, who, signal) => takeMedia(deps, request, model, who, signal),
      images: (parts, who, signal) => takeImages(deps, parts, who, signal),
      screen: (prompt, param) => checkPrompt(deps.policy, prompt, param),
    },
    close: () => decoder.close(),
  };
}
