ALTER TABLE "upload_sessions" ADD COLUMN "streamed" boolean;--> statement-breakpoint
ALTER TABLE "upload_sessions" ADD COLUMN "reserved_bytes" bigint;