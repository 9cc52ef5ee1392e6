package store

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/wnms/wnms/internal/wnms"
)

// outboxOrder is the lock that makes event ids commit in order on
// PostgreSQL: a sequence hands out ids at insert, so without it a reader
// could see id 6 committed before id 5 and skip 5 for good.
const outboxOrder = "event_outbox order"

// appendEvents stores evs in tx, setting their ids and timestamps.
func (s *Store) appendEvents(ctx context.Context, tx *sql.Tx, evs []*wnms.Event) error {
	if len(evs) == 0 {
		return nil
	}
	if err := lockKey(ctx, tx, s.dialect, outboxOrder); err != nil {
		return err
	}
	for _, e := range evs {
		if e.Timestamp == 0 {
			e.Timestamp = s.nowMS()
		}
		data := e.Data
		if len(data) == 0 {
			data = json.RawMessage("{}")
		}
		if err := tx.QueryRowContext(ctx, `INSERT INTO event_outbox (customer_id, kind, ts, location_path, data)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, e.CustomerID, e.Kind, e.Timestamp, e.LocationPath, string(data)).Scan(&e.ID); err != nil {
			return err
		}
	}
	return nil
}

// AppendEvents stores events in a transaction of their own
// (wnms.EventStore).
func (s *Store) AppendEvents(ctx context.Context, evs []*wnms.Event) error {
	return txOn(ctx, s.w, func(tx *sql.Tx) error { return s.appendEvents(ctx, tx, evs) })
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

// PurgeEvents deletes the events older than before (wnms.EventStore).
func (s *Store) PurgeEvents(ctx context.Context, before int64) (int64, error) {
	res, err := s.w.ExecContext(ctx, `DELETE FROM event_outbox WHERE ts < $1`, before)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
