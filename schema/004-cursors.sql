-- Firebreak store, version 4: where the monitor is in each file it follows (the gate's L7 proxy
-- writes one access log per sandbox, collectors/http/). A cursor is written in the transaction
-- that stores the events of the lines before it, so a restart starts after the last stored line:
-- nothing is read twice, nothing is skipped.
CREATE TABLE cursors (
	sandbox_id  INTEGER NOT NULL REFERENCES sandboxes(id),
	source      TEXT    NOT NULL,          -- the file, as the collector names it ("proxy-access.log")
	inode       INTEGER NOT NULL,          -- the file the offset is in (a rotated log is another)
	offset      INTEGER NOT NULL,          -- bytes read and stored: the next line starts here
	lines       INTEGER NOT NULL,          -- lines of this inode stored so far
	updated_ts  INTEGER NOT NULL,
	PRIMARY KEY (sandbox_id, source)
) WITHOUT ROWID;
