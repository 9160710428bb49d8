CREATE TABLE "drills" (
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"job_name" text NOT NULL,
	"filename" text NOT NULL,
	"status" text NOT NULL,
	"files" bigint NOT NULL,
	"bytes" bigint NOT NULL,
	"error" text,
	"finished_at" bigint NOT NULL,
	"recorded_at" bigint NOT NULL,
	CONSTRAINT "drills_scout_id_scout_instance_id_job_name_pk" PRIMARY KEY("scout_id","scout_instance_id","job_name")
);
