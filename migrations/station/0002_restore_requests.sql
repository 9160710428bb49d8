CREATE TABLE "restore_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"source_scout_id" text NOT NULL,
	"source_instance_id" text NOT NULL,
	"target_scout_id" text NOT NULL,
	"target_instance_id" text NOT NULL,
	"job_name" text NOT NULL,
	"filename" text NOT NULL,
	"status" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "restore_requests_target_idx" ON "restore_requests" USING btree ("target_scout_id","target_instance_id","created_at");