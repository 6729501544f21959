-- Session objects an erase has still to destroy (their rows went in the erase's batch): the request destroys
-- what it can, the cron sweep the rest, each row deleted once its object confirms.
CREATE TABLE `session_erasures` (
	`user_id` text NOT NULL,
	`session_id` text NOT NULL,
	`last_active_at` integer NOT NULL,
	`requested_at` integer NOT NULL,
	`tried_at` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`user_id`, `session_id`)
);
--> statement-breakpoint
CREATE INDEX `session_erasures_due` ON `session_erasures` (`tried_at`,`requested_at`);