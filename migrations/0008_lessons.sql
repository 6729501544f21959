CREATE TABLE `lesson_recalls` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`query` text NOT NULL,
	`client` text NOT NULL,
	`project` text,
	`result_ids` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lesson_recalls_user` ON `lesson_recalls` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `transcript_segments` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`transcript_id` text NOT NULL,
	`start_byte` integer NOT NULL,
	`end_byte` integer NOT NULL,
	`events` text NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`transcript_id`) REFERENCES `transcripts`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `transcript_segments_transcript` ON `transcript_segments` (`transcript_id`,`start_byte`);--> statement-breakpoint
-- Nothing wrote lessons or transcripts before this migration, and SQLite cannot add columns whose default is
-- an expression: both tables are recreated (with the full-text index over lessons, rebuilt in the next migration).
DROP TRIGGER IF EXISTS `lessons_ai`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `lessons_ad`;--> statement-breakpoint
DROP TRIGGER IF EXISTS `lessons_au`;--> statement-breakpoint
DROP TABLE IF EXISTS `lessons_fts`;--> statement-breakpoint
DROP TABLE `lessons`;--> statement-breakpoint
DROP TABLE `transcripts`;--> statement-breakpoint
CREATE TABLE `lessons` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`type` text NOT NULL,
	`signal` text DEFAULT 'MED' NOT NULL,
	`flags` text DEFAULT '[]' NOT NULL,
	`title` text DEFAULT '' NOT NULL,
	`content` text NOT NULL,
	`tags` text DEFAULT '[]' NOT NULL,
	`project` text,
	`source_session` text,
	`origin` text DEFAULT 'extracted' NOT NULL,
	`unlearned` integer DEFAULT false NOT NULL,
	`merged_into` text,
	`confirmations` integer DEFAULT 0 NOT NULL,
	`recalls` integer DEFAULT 0 NOT NULL,
	`last_recalled_at` integer,
	`owner` text GENERATED ALWAYS AS (replace(user_id, '_', '')) VIRTUAL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `lessons_user` ON `lessons` (`user_id`,`unlearned`);--> statement-breakpoint
CREATE INDEX `lessons_user_created` ON `lessons` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `transcripts` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`session_id` text NOT NULL,
	`project` text,
	`bytes_received` integer DEFAULT 0 NOT NULL,
	`bytes_synced` integer DEFAULT 0 NOT NULL,
	`total_bytes` integer DEFAULT 0 NOT NULL,
	`content_hash` text DEFAULT '' NOT NULL,
	`last_chunk_hash` text DEFAULT '' NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`error` text,
	`lessons_extracted` integer DEFAULT 0 NOT NULL,
	`entries_dropped` integer DEFAULT 0 NOT NULL,
	`synced_at` integer,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transcripts_session` ON `transcripts` (`user_id`,`session_id`);--> statement-breakpoint
CREATE INDEX `transcripts_user_updated` ON `transcripts` (`user_id`,`updated_at`);
