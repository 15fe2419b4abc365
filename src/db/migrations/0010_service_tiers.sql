ALTER TABLE `teams` ADD `service_tiers` text;--> statement-breakpoint
ALTER TABLE `teams` ADD `tier_prices` text;--> statement-breakpoint
ALTER TABLE `usage` ADD `service_tier` text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE `usage` ADD `price_factor_milli` integer DEFAULT 1000 NOT NULL;