// Builds the core's intake from kiln's parts: the media decoder, the fetch policy over the network (injectable for
// tests), the team's uploaded files, and the operator's content policy, under the configured limits.
import type { Config } from "../config.ts";
import type { CoreIntake } from "../inference/core-deps.ts";
import type { ContentPolicy } from "./content-policy.ts";
import { defaultNet } from "./fetch-net.ts";
import { fetchPolicyFromConfig, fetchRemote, type FetchPolicy, type Net } from "./fetch-policy.ts";
import { type IntakeDeps, takeMedia } from "./intake.ts";

export interface IntakeParts {
  config: Config;
  policy: ContentPolicy;
  decode: IntakeDeps["decode"];
  readFile: IntakeDeps["readFile"];
  /** The network remote media come over (tests inject a guarded one). */
  net?: Net;
  /** Changes to the fetch policy the config gives (tests lift the loopback ban here, and nowhere else). */
  fetchPolicy?: Partial<FetchPolicy>;
}

export function createIntake(parts: IntakeParts): CoreIntake {
  const fetchPolicy = { ...fetchPolicyFromConfig(parts.config), ...parts.fetchPolicy };
  const net = parts.net ?? defaultNet;
  const deps: IntakeDeps = {
    decode: parts.decode,
    fetch: async (url, signal) => (await fetchRemote(url, fetchPolicy, net, signal)).bytes,
    readFile: parts.readFile,
    policy: parts.policy,
    inlineMaxBytes: parts.config.maxInlineMediaBytes,
    fileMaxBytes: Math.max(parts.config.maxInlineMediaBytes, parts.config.fetchMaxBytes),
    maxParts: parts.config.maxMediaPerRequest,
  };
  return { prepare: (conv, model, teamId, signal) => takeMedia(deps, conv, model, teamId, signal) };
}
