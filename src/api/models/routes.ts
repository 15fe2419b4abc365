// GET /v1/models and GET /v1/models/{model}: what the registry serves.
import { Elysia } from "elysia";
import type { AppDeps } from "../../app-deps.ts";
import { requireEdgeAuth } from "../../auth/guard.ts";
import { edgePolicies, POLICY } from "../../http/edge-policy.ts";
import { mayUseModel } from "../../access/rules.ts";
import { ErrorBody } from "../../errors/schema.ts";
import { ApiError } from "../../errors/api-error.ts";
import type { DiffusionLayout } from "../../models/diffusion-layout.ts";
import { audioTokens, type MediaLayout } from "../../models/media-layout.ts";
import type { ModelEntry, ModelRegistry } from "../../models/registry.ts";
import { ModelList, ModelObject, ModelParams } from "./schema.ts";

export function toModelObject(m: ModelEntry, registry: ModelRegistry): typeof ModelObject.static {
  return {
    id: m.id,
    object: "model",
    created: m.created,
    owned_by: m.ownedBy,
    display_name: m.displayName,
    context_length: m.contextLength,
    // Every text model continues a raw prompt (POST /v1/completions): the legacy format needs no template.
    capabilities: { ...m.capabilities, completions: m.capabilities.chat, embeddings: !!m.embedding },
    pricing: {
      input_per_million: m.pricing.inputPerMillion,
      cached_input_per_million: m.pricing.cachedInputPerMillion,
      output_per_million: m.pricing.outputPerMillion,
      per_image: m.pricing.perImage,
    },
    ...(m.media ? { media: mediaObject(m.media) } : {}),
    ...(m.diffusion ? { images: imagesObject(m.diffusion) } : {}),
    ...(m.embedding
      ? { embedding: { dimensions: m.embedding.dimensions, dimensions_allowed: m.embedding.truncations, pooling: m.embedding.pooling, normalized: m.embedding.normalize } }
      : {}),
    status: registry.healthOf(m.id).status,
    // Text, image and embedding models run in workers; where, was chosen at start (KILN_DEVICE, kiln.json's device).
    ...(m.capabilities.chat || m.diffusion || m.embedding ? { device: m.placement?.device ?? "cpu", weights: m.placement?.dtype ?? m.defaultDtype } : {}),
  };
}

function imagesObject(d: DiffusionLayout): NonNullable<(typeof ModelObject.static)["images"]> {
  return { resolution: d.resolution, sizes: Object.fromEntries(d.sizes.map((s) => [s.ratio, `${s.width}x${s.height}`])), steps: d.steps, edits: d.edits };
}

function mediaObject(media: MediaLayout): NonNullable<(typeof ModelObject.static)["media"]> {
  const { image, audio } = media;
  return {
    ...(image ? { image: { size: image.size, patch_size: image.patchSize, tokens_per_image: image.tokens } } : {}),
    // A full chunk's rows over its seconds: what a long clip costs per second.
    ...(audio ? { audio: { sample_rate: audio.sampleRate, tokens_per_second: audioTokens(audio, audio.chunkSeconds * audio.sampleRate) / audio.chunkSeconds } } : {}),
  };
}

export function modelsRoutes(deps: AppDeps) {
  return new Elysia({ name: "models" })
    .use(edgePolicies)
    .derive(requireEdgeAuth)
    // Only the models this key (and its team) may use are listed; one it may not is a 403 like any request naming it.
    .get("/v1/models", ({ auth }) => ({
      object: "list" as const,
      data: deps.registry.list().filter((m) => mayUseModel(auth.rules, m.id)).map((m) => toModelObject(m, deps.registry)),
    }), {
      edge: POLICY.keyed,
      response: { 200: ModelList, 401: ErrorBody, 402: ErrorBody, 429: ErrorBody },
      detail: { summary: "List models", tags: ["Models"] },
    })
    .get(
      "/v1/models/:model",
      ({ params, auth }) => {
        deps.gate.checkModel(auth, params.model);
        const m = deps.registry.get(params.model);
        if (!m) throw ApiError.modelNotFound(params.model);
        return toModelObject(m, deps.registry);
      },
      {
        edge: POLICY.keyed,
        params: ModelParams,
        response: { 200: ModelObject, 401: ErrorBody, 402: ErrorBody, 403: ErrorBody, 404: ErrorBody, 429: ErrorBody },
        detail: { summary: "Retrieve a model", tags: ["Models"] },
      },
    );
}
