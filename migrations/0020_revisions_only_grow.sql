-- A user's memory revisions are numbered in the order they commit, and a number is never given twice, also
-- after an erase deleted the revisions below its own. A consolidation, edit or restore planned on a revision
-- before the erase would otherwise take a number the erase freed and write the erased memory back; this makes it
-- fail as a second run on the same revision does (the message is read as a constraint failure on memory_runs),
-- so it is retried on top of what is current.
CREATE TRIGGER `memory_runs_rev_grows` BEFORE INSERT ON `memory_runs`
WHEN NEW.`rev` <= (SELECT coalesce(max(`rev`), 0) FROM `memory_runs` WHERE `user_id` = NEW.`user_id`)
BEGIN
  SELECT RAISE(ABORT, 'constraint failed: memory_runs.rev must be above the latest revision');
END;
