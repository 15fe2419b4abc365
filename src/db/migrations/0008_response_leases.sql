ALTER TABLE `responses` ADD `lease_owner` text;--> statement-breakpoint
ALTER TABLE `responses` ADD `lease_until` integer;