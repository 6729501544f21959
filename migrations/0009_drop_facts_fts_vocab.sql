-- Word rarity is now counted in each user's own partition of facts_fts: the all-users vocabulary is unused.
DROP TABLE IF EXISTS `facts_fts_vocab`;
