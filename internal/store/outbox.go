package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/wnms/wnms/internal/wnms"
)

// outboxOrder is the lock that makes event ids commit in order on
// PostgreSQL: a sequence hands out ids at insert, so without it a reader
// could see id 6 committed before id 5 and skip 5 for good. Only the
// hub's batches and the sequencer take it; a change's transaction stores
// its event in the inbox instead (SequenceEvents).
const outboxOrder = "event_outbox order"

// appendEvents stores evs in tx, setting their ids and timestamps.
func (s *Store) appendEvents(ctx context.Context, tx *sql.Tx, evs []*wnms.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := lockKey(ctx, tx, s.dialect, outboxOrder); err != nil {
		return err
	}
	if sequencesEvents(s.dialect) {
		// The changes committed before these events come first: an event
		// stored later never gets a lower id than one committed earlier.
		if _, err := sequenceInTx(ctx, tx, 0); err != nil {
			return err
		}
	}
	now := s.nowMS()
	rows := make([][]any, len(evs))
	for i, e := range evs {
		if e.Timestamp == 0 {
			e.Timestamp = now
		}
		data := e.Data
		if len(data) == 0 {
			data = json.RawMessage("{}")
		}
		rows[i] = []any{e.CustomerID, e.Kind, e.Timestamp, e.LocationPath, string(data)}
	}
	if sequencesEvents(s.dialect) {
		return appendEventsPG(ctx, tx, evs, rows)
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO event_outbox (customer_id, kind, ts, location_path, data)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`)
	if err != nil {
		return err
	}
	defer st.Close()
	for i, e := range evs {
		if err := st.QueryRowContext(ctx, rows[i]...).Scan(&e.ID); err != nil {
			return err
		}
	}
	return nil
}

// appendEventsPG stores evs (their columns in rows) on PostgreSQL in two
// statements whatever their number: their ids taken from the outbox's
// sequence, in order, then the rows as one array a column. An insert an
// event was a round trip each inside the transaction that holds the
// outbox's order lock, and an event's delay to its webhooks and streams
// counted every insert after its own.
func appendEventsPG(ctx context.Context, tx *sql.Tx, evs []*wnms.Event, rows [][]any) error {
	ids, err := queryIDs(ctx, tx, `SELECT nextval(pg_get_serial_sequence('event_outbox', 'id')) FROM generate_series(1, $1)`, len(evs))
	if err != nil {
		return err
	}
	if len(ids) != len(evs) {
		return fmt.Errorf("event outbox: %d ids for %d events", len(ids), len(evs))
	}
	slices.Sort(ids)
	for i, e := range evs {
		e.ID = ids[i]
		rows[i] = append([]any{ids[i]}, rows[i]...)
	}
	cols, err := pgColumns(rows, "bigint", "bigint", "text", "bigint", "text", "text")
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO event_outbox (id, customer_id, kind, ts, location_path, data)
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[])`, cols...)
	return err
}

// AppendEvents stores events in a transaction of their own
// (wnms.EventStore).
func (s *Store) AppendEvents(ctx context.Context, evs []*wnms.Event) error {
	return txOn(ctx, s.w, func(tx *sql.Tx) error { return s.appendEvents(ctx, tx, evs) })
}

// SequenceBatch is how many inbox events one SequenceEvents moves.
const SequenceBatch = 1000

// SequenceEvents moves at most SequenceBatch events from the inbox, where
// changes' transactions store their configChanged events without the
// outbox's order lock, into the outbox, in one transaction under that
// lock, and returns how many it moved: their outbox ids are in commit
// order. Replicas each sequence, one at a time; each event is moved once,
// since a sequencer deletes the rows it copies. On SQLite changes write
// the outbox directly and there is nothing to move.
func (s *Store) SequenceEvents(ctx context.Context) (int, error) {
	if !sequencesEvents(s.dialect) {
		return 0, nil
	}
	var pending bool
	if err := s.w.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM event_inbox)`).Scan(&pending); err != nil || !pending {
		return 0, err
	}
	var moved int64
	err := txOn(ctx, s.w, func(tx *sql.Tx) error {
		if err := lockKey(ctx, tx, s.dialect, outboxOrder); err != nil {
			return err
		}
		var err error
		moved, err = sequenceInTx(ctx, tx, SequenceBatch)
		return err
	})
	return int(moved), err
}

// sequenceInTx moves at most limit inbox events (0: all) into the outbox
// in tx, which holds the outbox's order lock (PostgreSQL), and returns how
// many it moved. The statement's snapshot is taken after the lock: rows
// another sequencer moved meanwhile are gone from it.
func sequenceInTx(ctx context.Context, tx *sql.Tx, limit int) (int64, error) {
	pick := `SELECT id FROM event_inbox`
	args := []any{}
	if limit > 0 {
		pick += ` ORDER BY id LIMIT $1`
		args = append(args, limit)
	}
	res, err := tx.ExecContext(ctx, `WITH moved AS (
			DELETE FROM event_inbox WHERE id IN (`+pick+`)
			RETURNING id, customer_id, kind, ts, location_path, data)
		INSERT INTO event_outbox (customer_id, kind, ts, location_path, data)
		SELECT customer_id, kind, ts, location_path, data FROM moved ORDER BY id`, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// EventsAfter lists events after an id, oldest first (wnms.EventStore).
func (s *Store) EventsAfter(ctx context.Context, after int64, limit int) ([]*wnms.Event, error) {
	return eventsAfter(ctx, s.r, after, limit)
}

// LastEventID is the newest event's id (wnms.EventStore).
func (s *Store) LastEventID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT max(id) FROM event_outbox`).Scan(&id)
	return id.Int64, err
}

// PurgeEvents deletes the events older than before (wnms.EventStore):
// ids are given in commit order, so it deletes the oldest ids up to the
// first event at or after before, reading only what it deletes (there is
// no index on time: it would be a page more for every audited change to
// write). An event older than before but committed after a newer one
// goes at the next purge.
func (s *Store) PurgeEvents(ctx context.Context, before int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM event_outbox WHERE id < coalesce(
		(SELECT id FROM event_outbox WHERE ts >= $1 ORDER BY id LIMIT 1),
		(SELECT max(id) + 1 FROM event_outbox))`, before)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
