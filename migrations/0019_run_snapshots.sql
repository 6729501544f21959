-- Every memory revision keeps the two injected tiers as they stood after it (the working-memory narrative, the
-- scaffold and its per-key entries), so a user can put an earlier state back. Runs written before this have none
-- (null): they are listed, but cannot be restored.
ALTER TABLE `memory_runs` ADD `working_memory` text;--> statement-breakpoint
ALTER TABLE `memory_runs` ADD `scaffold` text;--> statement-breakpoint
ALTER TABLE `memory_runs` ADD `scaffold_meta` text;