-- An Idempotency-Key is bound to the whole request it first came with: every observation row of that request keeps
-- the SHA-256 of the whole (cleaned) body, so a reuse with any other body, a subset included, is a conflict.
ALTER TABLE `context_events` ADD `idempotency_body` text;