ALTER TABLE "usage" ADD COLUMN "batch_id" text;--> statement-breakpoint
CREATE INDEX "usage_batch_idx" ON "usage" USING btree ("batch_id");