CREATE TABLE `files` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`team_id` integer NOT NULL,
	`key_id` integer NOT NULL,
	`filename` text NOT NULL,
	`purpose` text NOT NULL,
	`bytes` integer NOT NULL,
	`status` text DEFAULT 'processed' NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `files_id_unique` ON `files` (`id`);--> statement-breakpoint
CREATE INDEX `files_team_idx` ON `files` (`team_id`,`created_at`,`seq`);