DROP INDEX "snapshots_job_idx";--> statement-breakpoint
ALTER TABLE "snapshots" ADD COLUMN "taken_at" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX "snapshots_job_idx" ON "snapshots" USING btree ("scout_id","scout_instance_id","job_name","taken_at");