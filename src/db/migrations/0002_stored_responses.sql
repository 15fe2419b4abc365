CREATE TABLE `response_events` (
	`response_id` text NOT NULL,
	`sequence` integer NOT NULL,
	`event_json` text NOT NULL,
	PRIMARY KEY(`response_id`, `sequence`),
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `response_input_items` (
	`response_id` text NOT NULL,
	`position` integer NOT NULL,
	`item_id` text NOT NULL,
	`item_json` text NOT NULL,
	PRIMARY KEY(`response_id`, `position`),
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `response_input_items_item_idx` ON `response_input_items` (`response_id`,`item_id`);--> statement-breakpoint
CREATE TABLE `responses` (
	`id` text PRIMARY KEY NOT NULL,
	`team_id` integer NOT NULL,
	`key_id` integer NOT NULL,
	`model` text NOT NULL,
	`status` text NOT NULL,
	`background` integer DEFAULT false NOT NULL,
	`previous_response_id` text,
	`request_json` text NOT NULL,
	`response_json` text NOT NULL,
	`stored_bytes` integer DEFAULT 0 NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `responses_team_idx` ON `responses` (`team_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `responses_expiry_idx` ON `responses` (`expires_at`);--> statement-breakpoint
CREATE INDEX `responses_status_idx` ON `responses` (`status`);