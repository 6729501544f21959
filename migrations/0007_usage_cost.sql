ALTER TABLE `usage` ADD `cache_read_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage` ADD `cache_creation_tokens` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `usage` ADD `cost_usd` real DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `usage_session` ON `usage` (`user_id`,`session_id`,`created_at`);