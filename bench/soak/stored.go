package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" driver, for the checks
)

// storedRows is what the store holds of the load's records, read from the
// database directly once the server has stopped.
type storedRows struct {
	batchIDs    map[string]int // event id → rows, of the ingest batches' events
	acctEvents  map[string]int // "MAC|ts" → rows, the accounting clients' events
	acctSamples map[string]int // "MAC|ts" → rows, their samples
	accepts     map[string]int // MAC → Success rows, the authenticated clients'
	quickCheck  []string       // SQLite: each file's PRAGMA quick_check answer
}

// readStored opens the run's store (SQLite files or the run's PostgreSQL
// database) and counts the rows.
func (r *run) readStored(ctx context.Context) (*storedRows, error) {
	s := &storedRows{batchIDs: map[string]int{}, acctEvents: map[string]int{}, acctSamples: map[string]int{}, accepts: map[string]int{}}
	var tel *sql.DB
	like := "LIKE"
	if r.dbURL == "" {
		for _, f := range []string{"wnms.db", "wnms-telemetry.db"} {
			db, err := sql.Open("sqlite", "file:"+filepath.Join(r.data, f))
			if err != nil {
				return nil, err
			}
			var res []string
			rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
			if err != nil {
				db.Close()
				return nil, fmt.Errorf("%s: quick_check: %w", f, err)
			}
			for rows.Next() {
				var v string
				rows.Scan(&v)
				res = append(res, v)
			}
			rows.Close()
			s.quickCheck = append(s.quickCheck, f+": "+strings.Join(res, "; "))
			if f == "wnms-telemetry.db" {
				tel = db
			} else {
				db.Close()
			}
		}
	} else {
		db, err := sql.Open("pgx", r.dbURL)
		if err != nil {
			return nil, err
		}
		tel, like = db, "ILIKE"
	}
	defer tel.Close()
	count := func(into map[string]int, q string) error {
		rows, err := tel.QueryContext(ctx, q)
		if err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				return err
			}
			if k != "" && !strings.HasPrefix(k, "soak-") {
				k = strings.ToUpper(k) // a MAC, as the load books it
			}
			into[k] += n
		}
		return rows.Err()
	}
	for _, q := range []struct {
		into map[string]int
		sql  string
	}{
		{s.batchIDs, "SELECT event_id, COUNT(*) FROM client_events WHERE event_id LIKE 'soak-%' GROUP BY event_id"},
		{s.acctEvents, "SELECT mac || '|' || ts, COUNT(*) FROM client_events WHERE mac " + like + " '02:AC:%' GROUP BY mac, ts"},
		{s.acctSamples, "SELECT mac || '|' || ts, COUNT(*) FROM client_stats WHERE mac " + like + " '02:AC:%' GROUP BY mac, ts"},
		{s.accepts, "SELECT mac, COUNT(*) FROM client_events WHERE mac " + like + " '02:AA:%' AND event_type = 'Success' GROUP BY mac"},
	} {
		if err := count(q.into, q.sql); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// quickCheckOK reports whether every file answered "ok" (true where there
// is none: PostgreSQL).
func (s *storedRows) quickCheckOK() bool {
	for _, q := range s.quickCheck {
		if !strings.HasSuffix(q, ": ok") {
			return false
		}
	}
	return true
}
