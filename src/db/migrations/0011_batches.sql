CREATE TABLE `batch_lines` (
	`batch_id` text NOT NULL,
	`line` integer NOT NULL,
	`custom_id` text NOT NULL,
	`body_json` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`result_json` text,
	PRIMARY KEY(`batch_id`, `line`),
	FOREIGN KEY (`batch_id`) REFERENCES `batches`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `batch_lines_status_idx` ON `batch_lines` (`batch_id`,`status`);--> statement-breakpoint
CREATE TABLE `batches` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`team_id` integer NOT NULL,
	`key_id` integer NOT NULL,
	`endpoint` text NOT NULL,
	`input_file_id` text NOT NULL,
	`completion_window` text NOT NULL,
	`status` text NOT NULL,
	`errors_json` text,
	`metadata_json` text,
	`output_file_id` text,
	`error_file_id` text,
	`total` integer DEFAULT 0 NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`in_progress_at` integer,
	`finalizing_at` integer,
	`completed_at` integer,
	`failed_at` integer,
	`expired_at` integer,
	`cancelling_at` integer,
	`cancelled_at` integer,
	`lease_owner` text,
	`lease_until` integer,
	`lease_epoch` integer DEFAULT 0 NOT NULL,
	FOREIGN KEY (`team_id`) REFERENCES `teams`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`key_id`) REFERENCES `api_keys`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `batches_id_unique` ON `batches` (`id`);--> statement-breakpoint
CREATE INDEX `batches_team_idx` ON `batches` (`team_id`,`seq`);--> statement-breakpoint
CREATE INDEX `batches_status_idx` ON `batches` (`status`);