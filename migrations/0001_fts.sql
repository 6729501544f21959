-- Full-text indexes (FTS5, porter stemming) over facts and lessons, kept in sync by triggers.
CREATE VIRTUAL TABLE `facts_fts` USING fts5(`text`, content='facts', content_rowid='rowid', tokenize='porter unicode61');
--> statement-breakpoint
CREATE TRIGGER `facts_ai` AFTER INSERT ON `facts` BEGIN
  INSERT INTO `facts_fts`(rowid, `text`) VALUES (new.rowid, new.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `facts_ad` AFTER DELETE ON `facts` BEGIN
  INSERT INTO `facts_fts`(`facts_fts`, rowid, `text`) VALUES ('delete', old.rowid, old.`text`);
END;
--> statement-breakpoint
CREATE TRIGGER `facts_au` AFTER UPDATE OF `text` ON `facts` BEGIN
  INSERT INTO `facts_fts`(`facts_fts`, rowid, `text`) VALUES ('delete', old.rowid, old.`text`);
  INSERT INTO `facts_fts`(rowid, `text`) VALUES (new.rowid, new.`text`);
END;
--> statement-breakpoint
CREATE VIRTUAL TABLE `lessons_fts` USING fts5(`content`, content='lessons', content_rowid='rowid', tokenize='porter unicode61');
--> statement-breakpoint
CREATE TRIGGER `lessons_ai` AFTER INSERT ON `lessons` BEGIN
  INSERT INTO `lessons_fts`(rowid, `content`) VALUES (new.rowid, new.`content`);
END;
--> statement-breakpoint
CREATE TRIGGER `lessons_ad` AFTER DELETE ON `lessons` BEGIN
  INSERT INTO `lessons_fts`(`lessons_fts`, rowid, `content`) VALUES ('delete', old.rowid, old.`content`);
END;
--> statement-breakpoint
CREATE TRIGGER `lessons_au` AFTER UPDATE OF `content` ON `lessons` BEGIN
  INSERT INTO `lessons_fts`(`lessons_fts`, rowid, `content`) VALUES ('delete', old.rowid, old.`content`);
  INSERT INTO `lessons_fts`(rowid, `content`) VALUES (new.rowid, new.`content`);
END;
