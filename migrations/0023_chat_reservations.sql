-- What running chat turns hold of their user's daily chat budget: reserved before each model call (its input and
-- max_tokens on top of what the turn has spent), deleted with the turn's usage row, ignored once expired.
CREATE TABLE `chat_reservations` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`session_id` text NOT NULL,
	`tokens` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `chat_reservations_user` ON `chat_reservations` (`user_id`,`expires_at`);