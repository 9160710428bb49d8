CREATE TABLE "replication_copies" (
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"job_name" text NOT NULL,
	"filename" text NOT NULL,
	"sha256" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"copied_at" bigint NOT NULL,
	CONSTRAINT "replication_copies_scout_id_scout_instance_id_job_name_filename_pk" PRIMARY KEY("scout_id","scout_instance_id","job_name","filename")
);
--> statement-breakpoint
CREATE TABLE "replication_pulls" (
	"token_id" text PRIMARY KEY NOT NULL,
	"token_name" text NOT NULL,
	"first_pull_at" bigint NOT NULL,
	"last_list_at" bigint,
	"last_download_at" bigint,
	"downloads" bigint DEFAULT 0 NOT NULL,
	"bytes_served" bigint DEFAULT 0 NOT NULL
);
