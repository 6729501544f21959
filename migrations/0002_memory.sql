CREATE TABLE `local_vector_postings` (
	`user_id` text NOT NULL,
	`dim` integer NOT NULL,
	`vector_id` text NOT NULL,
	`weight` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `local_vector_postings_lookup` ON `local_vector_postings` (`user_id`,`dim`,`weight`,`vector_id`);--> statement-breakpoint
CREATE INDEX `local_vector_postings_vector` ON `local_vector_postings` (`vector_id`);--> statement-breakpoint
CREATE TABLE `memory_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`rev` integer NOT NULL,
	`kind` text NOT NULL,
	`event_ids` text DEFAULT '[]' NOT NULL,
	`summary` text DEFAULT '{}' NOT NULL,
	`model` text,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `memory_runs_rev` ON `memory_runs` (`user_id`,`rev`);--> statement-breakpoint
ALTER TABLE `facts` ADD `slot` text;--> statement-breakpoint
ALTER TABLE `facts` ADD `embedded_at` integer;--> statement-breakpoint
CREATE INDEX `facts_slot` ON `facts` (`user_id`,`slot`);--> statement-breakpoint
CREATE INDEX `facts_unembedded` ON `facts` (`embedded_at`,`created_at`);--> statement-breakpoint
ALTER TABLE `users` ADD `scaffold_meta` text DEFAULT '{}' NOT NULL;