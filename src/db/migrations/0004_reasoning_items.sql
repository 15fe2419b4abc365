CREATE TABLE `response_reasoning_items` (
	`item_id` text PRIMARY KEY NOT NULL,
	`response_id` text NOT NULL,
	FOREIGN KEY (`response_id`) REFERENCES `responses`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `response_reasoning_items_response_idx` ON `response_reasoning_items` (`response_id`);--> statement-breakpoint
INSERT OR IGNORE INTO `response_reasoning_items` (`item_id`, `response_id`) SELECT json_extract(o.value, '$.id'), r.id FROM `responses` r, json_each(CASE WHEN json_valid(r.response_json) THEN r.response_json ELSE '{}' END, '$.output') o WHERE json_extract(o.value, '$.type') = 'reasoning' AND json_extract(o.value, '$.id') IS NOT NULL;
