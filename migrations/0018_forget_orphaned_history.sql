-- Forgetting a fact used to delete only its row: the statements it had replaced stayed stored, their superseded_by
-- naming a fact that no longer exists, and the statements those had replaced pointing at them. The user asked for
-- that history to be forgotten with the fact, as forgetting does now, so this deletes what earlier forgets left.
-- A row goes when its superseded_by chain ends at a missing fact: the rows naming a missing fact, then, step by
-- step, the rows of the same user naming one already found. A chain that ends at an existing fact, current or
-- not, keeps every row, and a row of another user naming a row found here is left (the API never writes one).
-- The full-text entries go with the rows (the facts_ad trigger). Vectors of these rows, if any, are left in
-- the index: replaced statements normally have none, and search drops a vector whose row is gone.
WITH RECURSIVE `orphaned`(`id`, `user_id`) AS (
  SELECT f.`id`, f.`user_id` FROM `facts` f
    WHERE f.`superseded_by` IS NOT NULL AND NOT EXISTS (SELECT 1 FROM `facts` g WHERE g.`id` = f.`superseded_by`)
  UNION
  SELECT f.`id`, f.`user_id` FROM `orphaned` o CROSS JOIN `facts` f ON f.`user_id` = o.`user_id` AND f.`superseded_by` = o.`id`
)
DELETE FROM `facts` WHERE `id` IN (SELECT `id` FROM `orphaned`);
