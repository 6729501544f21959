-- Full-text index over lessons: title, content and tags (porter stemming), plus the owner token (the user id
-- without underscores) so a search matches `owner : <me> AND {title content tags} : (...)` inside FTS5 and
-- reads only its user's partition. The owner column carries no rank weight.
CREATE VIRTUAL TABLE `lessons_fts` USING fts5(`title`, `content`, `tags`, `owner`, content='lessons', content_rowid='rowid', tokenize='porter unicode61');
--> statement-breakpoint
INSERT INTO `lessons_fts`(`lessons_fts`, `rank`) VALUES ('rank', 'bm25(2.0, 1.0, 1.5, 0.0)');
--> statement-breakpoint
CREATE TRIGGER `lessons_ai` AFTER INSERT ON `lessons` BEGIN
  INSERT INTO `lessons_fts`(rowid, `title`, `content`, `tags`, `owner`) VALUES (new.rowid, new.`title`, new.`content`, new.`tags`, new.`owner`);
END;
--> statement-breakpoint
CREATE TRIGGER `lessons_ad` AFTER DELETE ON `lessons` BEGIN
  INSERT INTO `lessons_fts`(`lessons_fts`, rowid, `title`, `content`, `tags`, `owner`) VALUES ('delete', old.rowid, old.`title`, old.`content`, old.`tags`, old.`owner`);
END;
--> statement-breakpoint
CREATE TRIGGER `lessons_au` AFTER UPDATE OF `title`, `content`, `tags`, `user_id` ON `lessons` BEGIN
  INSERT INTO `lessons_fts`(`lessons_fts`, rowid, `title`, `content`, `tags`, `owner`) VALUES ('delete', old.rowid, old.`title`, old.`content`, old.`tags`, old.`owner`);
  INSERT INTO `lessons_fts`(rowid, `title`, `content`, `tags`, `owner`) VALUES (new.rowid, new.`title`, new.`content`, new.`tags`, new.`owner`);
END;
