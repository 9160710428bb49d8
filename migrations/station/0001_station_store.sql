CREATE TABLE "instances" (
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"key_fingerprint" text,
	"advertised_url" text,
	"first_seen_at" bigint NOT NULL,
	"last_seen_at" bigint NOT NULL,
	CONSTRAINT "instances_scout_id_scout_instance_id_pk" PRIMARY KEY("scout_id","scout_instance_id")
);
--> statement-breakpoint
CREATE TABLE "snapshots" (
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"job_name" text NOT NULL,
	"filename" text NOT NULL,
	"size_bytes" bigint NOT NULL,
	"sha256" text NOT NULL,
	"fingerprint" text NOT NULL,
	"key_fingerprint" text,
	"mtime" bigint NOT NULL,
	"stored_at" bigint NOT NULL,
	"unusual" text,
	"missing" boolean DEFAULT false NOT NULL,
	CONSTRAINT "snapshots_scout_id_scout_instance_id_job_name_filename_pk" PRIMARY KEY("scout_id","scout_instance_id","job_name","filename")
);
--> statement-breakpoint
CREATE TABLE "station_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"shared" boolean NOT NULL,
	"max_registrations" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "token_bindings" (
	"token_hash" text NOT NULL,
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"bound_at" bigint NOT NULL,
	CONSTRAINT "token_bindings_token_hash_scout_id_scout_instance_id_pk" PRIMARY KEY("token_hash","scout_id","scout_instance_id")
);
--> statement-breakpoint
CREATE TABLE "upload_sessions" (
	"upload_id" text PRIMARY KEY NOT NULL,
	"idempotency_key" text NOT NULL,
	"token_hash" text NOT NULL,
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"job_name" text NOT NULL,
	"fingerprint" text NOT NULL,
	"timestamp" text NOT NULL,
	"archive_size_bytes" bigint NOT NULL,
	"archive_sha256" text NOT NULL,
	"key_fingerprint" text,
	"status" text NOT NULL,
	"stored_as" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "token_bindings" ADD CONSTRAINT "token_bindings_token_hash_station_tokens_token_hash_fk" FOREIGN KEY ("token_hash") REFERENCES "public"."station_tokens"("token_hash") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "snapshots_job_idx" ON "snapshots" USING btree ("scout_id","scout_instance_id","job_name","stored_at");--> statement-breakpoint
CREATE INDEX "snapshots_sha_idx" ON "snapshots" USING btree ("scout_id","scout_instance_id","job_name","sha256") WHERE NOT missing;--> statement-breakpoint
CREATE INDEX "token_bindings_instance_idx" ON "token_bindings" USING btree ("scout_id","scout_instance_id");--> statement-breakpoint
CREATE UNIQUE INDEX "upload_sessions_idempotency_idx" ON "upload_sessions" USING btree ("idempotency_key");