ALTER TABLE "upload_sessions" ADD COLUMN "target_name" text;--> statement-breakpoint
ALTER TABLE "upload_sessions" ADD COLUMN "store_state" text;--> statement-breakpoint
ALTER TABLE "upload_sessions" ADD COLUMN "lock_owner" text;--> statement-breakpoint
ALTER TABLE "upload_sessions" ADD COLUMN "lock_until" bigint;