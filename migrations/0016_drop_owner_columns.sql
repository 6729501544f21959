-- facts.owner and lessons.owner (the user id as one token) were what the full-text indexes searched by before
-- every indexed word carried its owner's tag; nothing reads them since. Both were virtual columns (no stored data).
ALTER TABLE `facts` DROP COLUMN `owner`;
--> statement-breakpoint
ALTER TABLE `lessons` DROP COLUMN `owner`;
