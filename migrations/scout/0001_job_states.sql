CREATE TABLE `job_states` (
	`relative_path` text PRIMARY KEY NOT NULL,
	`job_name` text NOT NULL,
	`last_status` text NOT NULL,
	`last_error` text,
	`last_attempt_at` integer,
	`last_success_at` integer,
	`last_stored_as` text,
	`stored_fingerprint` text,
	`staged` text
);
