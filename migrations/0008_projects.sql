CREATE TABLE `project_activity` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`project_id` text,
	`action` text NOT NULL,
	`actor` text NOT NULL,
	`reason` text,
	`summary` text NOT NULL,
	`detail` text DEFAULT '{}' NOT NULL,
	`undo` text,
	`session_id` text,
	`undone_at` integer,
	`created_at` integer DEFAULT (unixepoch('subsec') * 1000) NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `project_activity_user` ON `project_activity` (`user_id`,`created_at`);--> statement-breakpoint
CREATE UNIQUE INDEX `projects_user_name` ON `projects` (`user_id`,lower("name"));