ALTER TABLE "responses" ADD COLUMN "lease_owner" text;--> statement-breakpoint
ALTER TABLE "responses" ADD COLUMN "lease_until" bigint;