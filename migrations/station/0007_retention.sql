CREATE TABLE "job_retention" (
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"job_name" text NOT NULL,
	"overrides" text NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "job_retention_scout_id_scout_instance_id_job_name_pk" PRIMARY KEY("scout_id","scout_instance_id","job_name")
);
--> statement-breakpoint
ALTER TABLE "snapshots" ADD COLUMN "protected" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "snapshots" ADD COLUMN "locked_until" bigint;--> statement-breakpoint
-- A Station that already ran keeps the retention it had (keep_last 30, no calendar rules, unless
-- its admin saved other values): src/station/services/station-settings.ts reads this marker.
-- A new Station (empty tables) gets the calendar defaults.
INSERT INTO "settings" ("key", "value")
SELECT 'retention_defaults', '{"legacy":true}'
WHERE EXISTS (SELECT 1 FROM "users") OR EXISTS (SELECT 1 FROM "snapshots")
   OR EXISTS (SELECT 1 FROM "station_tokens") OR EXISTS (SELECT 1 FROM "settings")
   OR EXISTS (SELECT 1 FROM "instances")
ON CONFLICT ("key") DO NOTHING;
