-- Firebreak store, version 2: what the detectors concluded and what the monitor did about it.

-- An incident gathers the verdicts at alert or above for one sandbox. [start_ts, end_ts] is its
-- causal window (from the first step it implicates); retention never deletes events inside it.
CREATE TABLE incidents (
	id          INTEGER PRIMARY KEY,
	sandbox_id  INTEGER NOT NULL REFERENCES sandboxes(id),
	opened_ts   INTEGER NOT NULL,
	start_ts    INTEGER NOT NULL,
	end_ts      INTEGER,                   -- NULL while open
	severity    TEXT    NOT NULL,
	state       TEXT    NOT NULL DEFAULT 'open',
	summary     TEXT
);
CREATE INDEX incidents_by_sandbox ON incidents (sandbox_id, start_ts);

-- Events an incident names explicitly (a verdict's triggers); kept even outside the window.
CREATE TABLE incident_events (
	incident_id INTEGER NOT NULL REFERENCES incidents(id),
	event_id    INTEGER NOT NULL,
	PRIMARY KEY (incident_id, event_id)
) WITHOUT ROWID;
CREATE INDEX incident_events_by_event ON incident_events (event_id);

-- One verdict of one detector.
CREATE TABLE detections (
	id          INTEGER PRIMARY KEY,
	ts          INTEGER NOT NULL,
	sandbox_id  INTEGER NOT NULL REFERENCES sandboxes(id),
	step        INTEGER,
	rule        TEXT    NOT NULL,
	severity    TEXT    NOT NULL,
	policy_hash TEXT,
	incident_id INTEGER REFERENCES incidents(id),
	event_ids   TEXT    NOT NULL,          -- JSON array of the triggering events' ids
	reason      TEXT
);
CREATE INDEX detections_by_sandbox ON detections (sandbox_id, ts);
CREATE INDEX detections_by_incident ON detections (incident_id);

-- One freeze, thaw, kill or quarantine, automatic or asked for.
CREATE TABLE actions (
	id           INTEGER PRIMARY KEY,
	ts           INTEGER NOT NULL,
	sandbox_id   INTEGER NOT NULL REFERENCES sandboxes(id),
	kind         TEXT    NOT NULL,
	requested_by TEXT    NOT NULL,         -- a rule id, "cli", "http"
	detection_id INTEGER REFERENCES detections(id),
	incident_id  INTEGER REFERENCES incidents(id),
	latency_ns   INTEGER,                  -- from the triggering event to the action done
	result       TEXT    NOT NULL,
	reason       TEXT
);
CREATE INDEX actions_by_sandbox ON actions (sandbox_id, ts);
