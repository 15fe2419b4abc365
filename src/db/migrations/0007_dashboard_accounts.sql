CREATE TABLE `dashboard_sessions` (
	`token_hash` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`csrf_token` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `dashboard_users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `dashboard_sessions_user_idx` ON `dashboard_sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `dashboard_sessions_expiry_idx` ON `dashboard_sessions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `dashboard_users` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`username` text NOT NULL,
	`password_hash` text NOT NULL,
	`role` text NOT NULL,
	`team_id` integer,
	`created_at` integer DEFAULT (unixepoch()) NOT NULL,
	`last_login_at` integer,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dashboard_users_username_unique` ON `dashboard_users` (`username`);--> statement-breakpoint
CREATE INDEX `dashboard_users_team_idx` ON `dashboard_users` (`team_id`);