-- Firebreak store, version 3: the policies sandboxes ran under, by their content hash, so that a
-- verdict's policy_hash names text that can be read back (Part 8 replays under it) and a
-- restarted monitor finds the policy of a cgroup adopted with `firebreak watch --policy`.
CREATE TABLE policies (
	hash        TEXT    PRIMARY KEY,       -- "sha256:..." of text, as policy_hash() gives it
	name        TEXT    NOT NULL,
	text        TEXT    NOT NULL,          -- the file's bytes, exactly
	first_ts    INTEGER NOT NULL           -- when this store first saw it
) WITHOUT ROWID;
