ALTER TABLE `usage` ADD `batch_id` text;--> statement-breakpoint
CREATE INDEX `usage_batch_idx` ON `usage` (`batch_id`);