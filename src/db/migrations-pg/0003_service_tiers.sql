ALTER TABLE "teams" ADD COLUMN "service_tiers" text;--> statement-breakpoint
ALTER TABLE "teams" ADD COLUMN "tier_prices" text;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "service_tier" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "usage" ADD COLUMN "price_factor_milli" integer DEFAULT 1000 NOT NULL;