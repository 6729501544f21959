CREATE TABLE `memory_consent` (
	`user_id` text PRIMARY KEY NOT NULL,
	`modes` text NOT NULL,
	`sensitive` text DEFAULT '[]' NOT NULL,
	`updated_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
