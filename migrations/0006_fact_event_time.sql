ALTER TABLE `facts` ADD `event_at` integer;--> statement-breakpoint
CREATE INDEX `facts_event` ON `facts` (`user_id`,`event_at`);--> statement-breakpoint
-- Facts written before event times existed happened, as far as anyone knows, when they were written.
UPDATE `facts` SET `event_at` = coalesce(CAST(strftime('%s', json_extract(`metadata`, '$.date')) AS INTEGER) * 1000, `created_at`);
--> statement-breakpoint
-- How many facts (of all users) hold each indexed term: how rare a query word is, for a search's match signal.
CREATE VIRTUAL TABLE `facts_fts_vocab` USING fts5vocab(`facts_fts`, 'row');
