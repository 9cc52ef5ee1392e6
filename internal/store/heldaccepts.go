package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

// PutHeldAccepts stores held RADIUS accepts, one transaction (a
// statement of many rows: one round trip for a few hundred); one stored
// before (same server and eventId) stays as it is.
func (s *Store) PutHeldAccepts(ctx context.Context, hs []wnms.HeldAccept) error {
	if len(hs) == 0 {
		return nil
	}
	return txOn(ctx, s.w, func(tx *sql.Tx) error {
		for len(hs) > 0 {
			n := min(len(hs), 500)
			var q strings.Builder
			q.WriteString(`INSERT INTO held_accepts (server_id, event_id, customer_id, source, held_at, record) VALUES `)
			args := make([]any, 0, 6*n)
			for i, h := range hs[:n] {
				if i > 0 {
					q.WriteString(", ")
				}
				q.WriteString("(" + placeholders(6*i+1, 6) + ")")
				rec, err := json.Marshal(h.Success)
				if err != nil {
					return err
				}
				args = append(args, h.ServerID, h.EventID, h.CustomerID, h.Source, h.HeldAt, string(rec))
			}
			q.WriteString(` ON CONFLICT (server_id, event_id) DO NOTHING`)
			if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
				return err
			}
			hs = hs[n:]
		}
		return nil
	})
}

// DeleteHeldAccepts removes the held accepts of server serverID with the
// given eventIds.
func (s *Store) DeleteHeldAccepts(ctx context.Context, serverID int64, eventIDs []string) error {
	for len(eventIDs) > 0 {
		n := min(len(eventIDs), 500)
		args := []any{serverID}
		for _, id := range eventIDs[:n] {
			args = append(args, id)
		}
		if _, err := s.w.ExecContext(ctx, `DELETE FROM held_accepts WHERE server_id = $1 AND event_id IN (`+placeholders(2, n)+`)`,
			args...); err != nil {
			return err
		}
		eventIDs = eventIDs[n:]
	}
	return nil
}

// HeldAccepts lists the held accepts of server serverID (none when
// serverID is 0) and those of any server held before leftBefore (ms),
// oldest first, at most limit.
func (s *Store) HeldAccepts(ctx context.Context, serverID, leftBefore int64, limit int) ([]wnms.HeldAccept, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT server_id, event_id, customer_id, source, held_at, record FROM held_accepts
		WHERE server_id = $1 OR held_at < $2 ORDER BY held_at, event_id LIMIT $3`, serverID, leftBefore, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.HeldAccept
	for rows.Next() {
		var h wnms.HeldAccept
		var rec string
		if err := rows.Scan(&h.ServerID, &h.EventID, &h.CustomerID, &h.Source, &h.HeldAt, &rec); err != nil {
			return nil, err
		}
		// A row that does not decode (written by another version) has
		// no client: the bridge lets it go.
		_ = json.Unmarshal([]byte(rec), &h.Success)
		out = append(out, h)
	}
	return out, rows.Err()
}

// StoredEventIDs tells which of eventIDs the customer has stored as
// client events at or after since (ms), whatever their timestamp.
func (s *Store) StoredEventIDs(ctx context.Context, customerID int64, eventIDs []string, since int64) (map[string]bool, error) {
	out := map[string]bool{}
	for len(eventIDs) > 0 {
		n := min(len(eventIDs), 500)
		args := []any{customerID, since}
		for _, id := range eventIDs[:n] {
			args = append(args, id)
		}
		rows, err := s.tr.QueryContext(ctx, storedEventIDsQuery(n), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		eventIDs = eventIDs[n:]
	}
	return out, nil
}

// storedEventIDsQuery is StoredEventIDs' query of n eventIds ($3 on).
func storedEventIDsQuery(n int) string {
	return `SELECT DISTINCT event_id FROM client_events
		WHERE customer_id = $1 AND ts >= $2 AND event_id IN (` + placeholders(3, n) + `)`
}

// placeholders is "$first, ..., $(first+n-1)".
func placeholders(first, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
	}
	return b.String()
}
