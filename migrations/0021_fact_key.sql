-- A fact's `slot` was computed on write by English regexes and word lists (src/memory/slots.ts), and a new fact
-- superseded the older live facts with the same slot: it misread other people's attributes and ordinary chat lines
-- as the user's changing attributes. Supersession is now decided by whoever knows: the consolidation model or the
-- API caller names a `key` ("user.home_city", "sister.employer") and a new fact supersedes the older ones with the
-- same key. The column is renamed, and the regex slots it held ("user|live_in") are set to NULL: they are a word
-- list's guesses, not keys anyone named; no writer uses their format, and left in place a restated old fact would
-- still supersede by them. What they superseded earlier stays history as it is (superseded_by is untouched): restating
-- a fact (POST /v1/memory/facts) brings it back. The FTS triggers watch text and user_id only, so this rewrites no
-- full-text entry.
ALTER TABLE `facts` RENAME COLUMN "slot" TO "key";--> statement-breakpoint
UPDATE `facts` SET `key` = NULL WHERE `key` IS NOT NULL;--> statement-breakpoint
DROP INDEX `facts_slot`;--> statement-breakpoint
CREATE INDEX `facts_key` ON `facts` (`user_id`,`key`);
