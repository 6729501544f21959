-- facts_fts also indexes each fact's owner (facts.owner, the user id as one token), so a search matches
-- `owner : <me> AND text : (...)` inside FTS5 and reads one user's partition instead of every user's matches.
DROP TRIGGER `facts_ai`;
--> statement-breakpoint
DROP TRIGGER `facts_ad`;
--> statement-breakpoint
DROP TRIGGER `facts_au`;
--> statement-breakpoint
DROP TABLE `facts_fts`;
--> statement-breakpoint
CREATE VIRTUAL TABLE `facts_fts` USING fts5(`text`, `owner`, content='facts', content_rowid='rowid', tokenize='porter unicode61');
--> statement-breakpoint
INSERT INTO `facts_fts`(`facts_fts`) VALUES ('rebuild');
--> statement-breakpoint
INSERT INTO `facts_fts`(`facts_fts`, `rank`) VALUES ('rank', 'bm25(1.0, 0.0)');
--> statement-breakpoint
CREATE TRIGGER `facts_ai` AFTER INSERT ON `facts` BEGIN
  INSERT INTO `facts_fts`(rowid, `text`, `owner`) VALUES (new.rowid, new.`text`, new.`owner`);
END;
--> statement-breakpoint
CREATE TRIGGER `facts_ad` AFTER DELETE ON `facts` BEGIN
  INSERT INTO `facts_fts`(`facts_fts`, rowid, `text`, `owner`) VALUES ('delete', old.rowid, old.`text`, old.`owner`);
END;
--> statement-breakpoint
CREATE TRIGGER `facts_au` AFTER UPDATE OF `text`, `user_id` ON `facts` BEGIN
  INSERT INTO `facts_fts`(`facts_fts`, rowid, `text`, `owner`) VALUES ('delete', old.rowid, old.`text`, old.`owner`);
  INSERT INTO `facts_fts`(rowid, `text`, `owner`) VALUES (new.rowid, new.`text`, new.`owner`);
END;
