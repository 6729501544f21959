-- Erased text must not stay readable in the full-text indexes' shadow tables. FTS5's `secure-delete`
-- option (SQLite 3.42+) removes a deleted row's entries from the index segments at delete time, instead
-- of only recording a delete marker; it is stored in the index's config, so it holds for every later
-- delete. 'optimize' then merges the existing segments, purging what earlier deletes left behind.
INSERT INTO `facts_fts`(`facts_fts`, `rank`) VALUES ('secure-delete', 1);
--> statement-breakpoint
INSERT INTO `facts_fts`(`facts_fts`) VALUES ('optimize');
--> statement-breakpoint
INSERT INTO `lessons_fts`(`lessons_fts`, `rank`) VALUES ('secure-delete', 1);
--> statement-breakpoint
INSERT INTO `lessons_fts`(`lessons_fts`) VALUES ('optimize');
