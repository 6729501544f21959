-- The write fence of a user being moved to another shard (src/account/move.ts, docs/scaling.md). A request that
-- looked the user up before the move began may still write to the old shard while the rows are copied; these
-- triggers refuse such writes inside the statement itself, so no write lands where the copy would miss it.
-- `users.fence` on the old shard: 1 while the copy runs (every insert, update and delete of the user's rows
-- fails), 2 once the rows are copied (inserts and updates still fail; deletes pass, so the move can delete what
-- it copied). The message starts with `user_moving`, which the HTTP edge answers as 503 with Retry-After.
-- Not fenced: audit_logs (the operator's records, written about a user also while they move) and
-- chat_reservations (budget held by a running turn, transient and never copied).
CREATE TRIGGER `sites_fence_insert` BEFORE INSERT ON `sites`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `sites_fence_update` BEFORE UPDATE ON `sites`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `sites_fence_delete` BEFORE DELETE ON `sites`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_documents_fence_insert` BEFORE INSERT ON `brain_documents`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_documents_fence_update` BEFORE UPDATE ON `brain_documents`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_documents_fence_delete` BEFORE DELETE ON `brain_documents`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_versions_fence_insert` BEFORE INSERT ON `brain_versions`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_versions_fence_update` BEFORE UPDATE ON `brain_versions`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_versions_fence_delete` BEFORE DELETE ON `brain_versions`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_entries_fence_insert` BEFORE INSERT ON `brain_entries`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_entries_fence_update` BEFORE UPDATE ON `brain_entries`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_entries_fence_delete` BEFORE DELETE ON `brain_entries`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_proposals_fence_insert` BEFORE INSERT ON `brain_proposals`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_proposals_fence_update` BEFORE UPDATE ON `brain_proposals`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `brain_proposals_fence_delete` BEFORE DELETE ON `brain_proposals`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `sessions_fence_insert` BEFORE INSERT ON `sessions`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `sessions_fence_update` BEFORE UPDATE ON `sessions`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `sessions_fence_delete` BEFORE DELETE ON `sessions`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `session_erasures_fence_insert` BEFORE INSERT ON `session_erasures`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `session_erasures_fence_update` BEFORE UPDATE ON `session_erasures`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `session_erasures_fence_delete` BEFORE DELETE ON `session_erasures`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `context_events_fence_insert` BEFORE INSERT ON `context_events`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `context_events_fence_update` BEFORE UPDATE ON `context_events`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `context_events_fence_delete` BEFORE DELETE ON `context_events`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `facts_fence_insert` BEFORE INSERT ON `facts`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `facts_fence_update` BEFORE UPDATE ON `facts`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `facts_fence_delete` BEFORE DELETE ON `facts`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `local_vectors_fence_insert` BEFORE INSERT ON `local_vectors`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `local_vectors_fence_update` BEFORE UPDATE ON `local_vectors`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `local_vectors_fence_delete` BEFORE DELETE ON `local_vectors`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `local_vector_postings_fence_insert` BEFORE INSERT ON `local_vector_postings`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `local_vector_postings_fence_update` BEFORE UPDATE ON `local_vector_postings`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `local_vector_postings_fence_delete` BEFORE DELETE ON `local_vector_postings`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `memory_runs_fence_insert` BEFORE INSERT ON `memory_runs`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `memory_runs_fence_update` BEFORE UPDATE ON `memory_runs`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `memory_runs_fence_delete` BEFORE DELETE ON `memory_runs`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `connections_fence_insert` BEFORE INSERT ON `connections`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `connections_fence_update` BEFORE UPDATE ON `connections`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `connections_fence_delete` BEFORE DELETE ON `connections`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `projects_fence_insert` BEFORE INSERT ON `projects`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `projects_fence_update` BEFORE UPDATE ON `projects`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `projects_fence_delete` BEFORE DELETE ON `projects`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `project_activity_fence_insert` BEFORE INSERT ON `project_activity`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `project_activity_fence_update` BEFORE UPDATE ON `project_activity`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `project_activity_fence_delete` BEFORE DELETE ON `project_activity`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `lessons_fence_insert` BEFORE INSERT ON `lessons`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `lessons_fence_update` BEFORE UPDATE ON `lessons`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `lessons_fence_delete` BEFORE DELETE ON `lessons`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `transcripts_fence_insert` BEFORE INSERT ON `transcripts`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `transcripts_fence_update` BEFORE UPDATE ON `transcripts`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `transcripts_fence_delete` BEFORE DELETE ON `transcripts`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `transcript_segments_fence_insert` BEFORE INSERT ON `transcript_segments`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `transcript_segments_fence_update` BEFORE UPDATE ON `transcript_segments`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `transcript_segments_fence_delete` BEFORE DELETE ON `transcript_segments`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `lesson_recalls_fence_insert` BEFORE INSERT ON `lesson_recalls`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `lesson_recalls_fence_update` BEFORE UPDATE ON `lesson_recalls`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `lesson_recalls_fence_delete` BEFORE DELETE ON `lesson_recalls`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `memory_consent_fence_insert` BEFORE INSERT ON `memory_consent`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `memory_consent_fence_update` BEFORE UPDATE ON `memory_consent`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `memory_consent_fence_delete` BEFORE DELETE ON `memory_consent`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `context_logs_fence_insert` BEFORE INSERT ON `context_logs`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `context_logs_fence_update` BEFORE UPDATE ON `context_logs`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `context_logs_fence_delete` BEFORE DELETE ON `context_logs`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `usage_fence_insert` BEFORE INSERT ON `usage`
WHEN (SELECT `fence` FROM `users` WHERE `id` = NEW.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `usage_fence_update` BEFORE UPDATE ON `usage`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) IS NOT NULL
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `usage_fence_delete` BEFORE DELETE ON `usage`
WHEN (SELECT `fence` FROM `users` WHERE `id` = OLD.`user_id`) = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `users_fence_update` BEFORE UPDATE OF `working_memory`, `scaffold`, `learned_info`, `scaffold_meta`, `review_mode`, `updated_at` ON `users`
WHEN OLD.`fence` IS NOT NULL AND NEW.`fence` IS OLD.`fence`
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
--> statement-breakpoint
CREATE TRIGGER `users_fence_delete` BEFORE DELETE ON `users`
WHEN OLD.`fence` = 1
BEGIN
  SELECT RAISE(ABORT, 'user_moving: the account is being moved to another database; retry shortly');
END;
