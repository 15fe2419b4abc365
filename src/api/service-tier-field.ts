// `service_tier` in the compatible formats: Chat Completions' and Responses' request field, the lane it resolves to,
// and the value an answer echoes (the lane it really ran in, in the values each format's clients know); Messages' too.
import { t } from "elysia";
import { REQUESTED_TIERS, type RequestedTier, type ServiceTier } from "../inference/service-tier.ts";

export const ServiceTierField = t.Optional(
  t.Union([...REQUESTED_TIERS.map((tier) => t.Literal(tier)), t.Null()], {
    description:
      "auto | default | flex | priority: the lane the request waits and runs in. priority goes first; flex shares the batch lane: it fills the " +
      "rows interactive requests leave free and yields them at the next step. auto (or absent) is default. The answer's service_tier says which ran.",
    error: `service_tier must be one of ${REQUESTED_TIERS.join(", ")}`,
  }),
);

/** An answer's service_tier. */
export const EchoedTier = t.Union([t.Literal("default"), t.Literal("flex"), t.Literal("priority")], {
  description: "the lane the request ran in (a batch line's: flex, the lane batches share)",
});

/** The lane a request's own service_tier asks for (auto or absent: default). */
export function requestedLane(tier: RequestedTier | null | undefined): ServiceTier {
  return !tier || tier === "auto" ? "default" : tier;
}

/** Messages' request field: both of its values run in the default lane (the format has no flex). */
export const MessagesTierField = t.Optional(
  t.Union([t.Literal("auto"), t.Literal("standard_only")], {
    description: "auto | standard_only: both run in the default lane; the message's usage.service_tier says which lane ran (batch for a batch line)",
    error: 'service_tier must be "auto" or "standard_only"',
  }),
);

/** Messages' usage.service_tier: its lane in the format's words (flex, which Messages cannot ask for, counts as standard). */
export function messagesTier(lane: ServiceTier | undefined): "standard" | "priority" | "batch" {
  return lane === "batch" || lane === "priority" ? lane : "standard";
}

/** What an answer's service_tier says: its lane, a batch line's as "flex" (the lane it shares; the formats have no "batch"). */
export function echoedTier(lane: ServiceTier | undefined): "default" | "flex" | "priority" {
  return lane === "batch" ? "flex" : (lane ?? "default");
}
