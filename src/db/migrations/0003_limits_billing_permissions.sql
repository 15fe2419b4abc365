CREATE TABLE `billing_accounts` (
	`team_id` integer PRIMARY KEY NOT NULL,
	`balance_micros` integer DEFAULT 0 NOT NULL,
	`lapsed_at` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `ledger` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`team_id` integer NOT NULL,
	`kind` text NOT NULL,
	`amount_micros` integer NOT NULL,
	`balance_after_micros` integer NOT NULL,
	`request_id` text,
	`note` text,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`request_id`) REFERENCES `usage`(`request_id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ledger_request_id_unique` ON `ledger` (`request_id`);--> statement-breakpoint
CREATE INDEX `ledger_team_idx` ON `ledger` (`team_id`,`id`);--> statement-breakpoint
CREATE TABLE `tiers` (
	`name` text PRIMARY KEY NOT NULL,
	`rpm` integer,
	`tpm` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL
);
--> statement-breakpoint
ALTER TABLE `api_keys` ADD `allowed_models` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `allowed_endpoints` text;--> statement-breakpoint
ALTER TABLE `teams` ADD `tier` text;--> statement-breakpoint
ALTER TABLE `teams` ADD `billing_enabled` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `teams` ADD `allowed_models` text;--> statement-breakpoint
ALTER TABLE `teams` ADD `allowed_endpoints` text;