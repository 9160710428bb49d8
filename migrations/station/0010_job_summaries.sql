CREATE TABLE "job_summaries" (
	"scout_id" text NOT NULL,
	"scout_instance_id" text NOT NULL,
	"job_name" text NOT NULL,
	"snapshot_count" integer NOT NULL,
	"total_bytes" bigint NOT NULL,
	"missing_count" integer NOT NULL,
	"unusual_count" integer NOT NULL,
	"protected_count" integer NOT NULL,
	"newest_stored_at" bigint,
	"oldest_stored_at" bigint,
	"newest_unusual" boolean,
	CONSTRAINT "job_summaries_scout_id_scout_instance_id_job_name_pk" PRIMARY KEY("scout_id","scout_instance_id","job_name")
);
--> statement-breakpoint
-- Keeps job_summaries following snapshots (src/station/db/job-summary-tables.ts): after each
-- statement that changes snapshots, the touched jobs' rows are computed again from their
-- snapshots, one writer per job at a time (two Stations on one database), in a fixed order.
-- The lock class is 0x6a6f6273 ("jobs").
CREATE FUNCTION job_summaries_follow() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  touched jsonb;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT jsonb_agg(DISTINCT jsonb_build_array(scout_id, scout_instance_id, job_name)) INTO touched FROM new_rows;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT jsonb_agg(DISTINCT jsonb_build_array(scout_id, scout_instance_id, job_name)) INTO touched
      FROM (SELECT scout_id, scout_instance_id, job_name FROM old_rows
            UNION SELECT scout_id, scout_instance_id, job_name FROM new_rows) changed;
  ELSE
    SELECT jsonb_agg(DISTINCT jsonb_build_array(scout_id, scout_instance_id, job_name)) INTO touched FROM old_rows;
  END IF;
  IF touched IS NULL THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(1785684595, hashtext(k))
    FROM (SELECT j::text AS k FROM jsonb_array_elements(touched) j ORDER BY 1) keys;
  INSERT INTO job_summaries AS js (scout_id, scout_instance_id, job_name, snapshot_count, total_bytes,
      missing_count, unusual_count, protected_count, newest_stored_at, oldest_stored_at, newest_unusual)
    SELECT s.scout_id, s.scout_instance_id, s.job_name,
      count(*) FILTER (WHERE NOT s.missing),
      coalesce(sum(s.size_bytes) FILTER (WHERE NOT s.missing), 0),
      count(*) FILTER (WHERE s.missing),
      count(*) FILTER (WHERE s.unusual IS NOT NULL),
      count(*) FILTER (WHERE s.protected),
      max(s.stored_at) FILTER (WHERE NOT s.missing),
      min(s.stored_at) FILTER (WHERE NOT s.missing),
      (array_agg(s.unusual IS NOT NULL ORDER BY s.taken_at DESC, s.stored_at DESC, s.filename DESC)
        FILTER (WHERE NOT s.missing))[1]
    FROM snapshots s
    JOIN jsonb_array_elements(touched) j
      ON s.scout_id = j->>0 AND s.scout_instance_id = j->>1 AND s.job_name = j->>2
    GROUP BY s.scout_id, s.scout_instance_id, s.job_name
  ON CONFLICT (scout_id, scout_instance_id, job_name) DO UPDATE SET
    snapshot_count = EXCLUDED.snapshot_count, total_bytes = EXCLUDED.total_bytes,
    missing_count = EXCLUDED.missing_count, unusual_count = EXCLUDED.unusual_count,
    protected_count = EXCLUDED.protected_count, newest_stored_at = EXCLUDED.newest_stored_at,
    oldest_stored_at = EXCLUDED.oldest_stored_at, newest_unusual = EXCLUDED.newest_unusual;
  DELETE FROM job_summaries js USING jsonb_array_elements(touched) j
    WHERE js.scout_id = j->>0 AND js.scout_instance_id = j->>1 AND js.job_name = j->>2
      AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.scout_id = js.scout_id
        AND s.scout_instance_id = js.scout_instance_id AND s.job_name = js.job_name);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE TRIGGER job_summaries_on_insert AFTER INSERT ON snapshots
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION job_summaries_follow();
--> statement-breakpoint
CREATE TRIGGER job_summaries_on_update AFTER UPDATE ON snapshots
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION job_summaries_follow();
--> statement-breakpoint
CREATE TRIGGER job_summaries_on_delete AFTER DELETE ON snapshots
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION job_summaries_follow();
--> statement-breakpoint
-- The jobs a Station already holds. An UPDATE that changes nothing fires the trigger above.
UPDATE snapshots SET missing = missing WHERE filename IN (
  SELECT min(filename) FROM snapshots GROUP BY scout_id, scout_instance_id, job_name);
