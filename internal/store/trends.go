package store

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

// bucketMS is the width of a trend bucket.
const bucketMS = 5 * 60 * 1000

// InsertAPStats records AP heartbeats (see telemetry.TrendStore).
func (s *Store) InsertAPStats(ctx context.Context, customerID int64, aps []*wnms.AP, now int64) error {
	rows := make([][]any, 0, len(aps))
	for _, a := range aps {
		var tx, rx any
		if a.TxBytes != nil {
			tx = *a.TxBytes
		}
		if a.RxBytes != nil {
			rx = *a.RxBytes
		}
		interval := int64(0)
		if a.PrevSeen > 0 && a.PrevSeen < now {
			interval = now - a.PrevSeen
		}
		rows = append(rows, []any{customerID, a.BoxID, now, interval, tx, rx, int64(a.NumAssocClients)})
	}
	return s.withDays(ctx, 1, func(int) int64 { return now }, func() error {
		return s.bulk(ctx, s.tw, func(b *bulkTx) error {
			_, err := b.Insert(ctx, "ap_stats", []string{"customer_id", "box_id", "ts", "interval_ms", "tx_bytes", "rx_bytes", "clients"}, rows, "")
			return err
		})
	})
}

// ClientTrend buckets a client's samples (see telemetry.TrendStore).
func (s *Store) ClientTrend(ctx context.Context, customerID int64, mac, ssid string, locs []int64, from, to int64) ([]wnms.ClientBucket, error) {
	var args sqlArgs
	where := "customer_id = " + args.add(customerID) + " AND mac = " + args.add(mac) +
		" AND ts >= " + args.add(from) + " AND ts <= " + args.add(to)
	if ssid != "" {
		where += " AND ssid = " + args.add(ssid)
	}
	if locs != nil {
		cond, arg := inList(s.dialect, "$"+strconv.Itoa(len(args)+1), locs)
		args = append(args, arg)
		where += " AND location_id" + cond
	}
	b := strconv.Itoa(bucketMS)
	rows, err := s.tr.QueryContext(ctx, `SELECT (ts / `+b+`) * `+b+` AS bucket, avg(data_rate), avg(retry_pct), avg(rssi),
		CAST(coalesce(sum(coalesce(tx_bytes, 0) + coalesce(rx_bytes, 0)), 0) AS BIGINT), count(tx_bytes) + count(rx_bytes)
		FROM client_stats WHERE `+where+` GROUP BY bucket ORDER BY bucket`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.ClientBucket
	for rows.Next() {
		var x wnms.ClientBucket
		var reported int64
		var rate, retry, rssi sql.NullFloat64 // NULL: only samples of traffic (no radio metrics)
		if err := rows.Scan(&x.Time, &rate, &retry, &rssi, &x.Bytes, &reported); err != nil {
			return nil, err
		}
		x.DataRate, x.Retry, x.RSSI, x.HasRadio = rate.Float64, retry.Float64, rssi.Float64, rate.Valid
		x.HasTraffic = reported > 0
		out = append(out, x)
	}
	return out, rows.Err()
}

// APTrend buckets an AP's heartbeats (see telemetry.TrendStore). An AP's
// first heartbeat follows no other, so the bytes it reports cover an
// unknown time and do not count.
func (s *Store) APTrend(ctx context.Context, customerID, boxID int64, from, to int64) ([]wnms.APBucket, error) {
	b := strconv.Itoa(bucketMS)
	rows, err := s.tr.QueryContext(ctx, `SELECT (ts / `+b+`) * `+b+` AS bucket,
		CAST(coalesce(sum(CASE WHEN interval_ms > 0 THEN coalesce(tx_bytes, 0) + coalesce(rx_bytes, 0) ELSE 0 END), 0) AS BIGINT),
		CAST(coalesce(sum(CASE WHEN interval_ms > 0 AND (tx_bytes IS NOT NULL OR rx_bytes IS NOT NULL) THEN interval_ms ELSE 0 END), 0) AS BIGINT),
		count(CASE WHEN interval_ms > 0 THEN coalesce(tx_bytes, rx_bytes) END), max(clients)
		FROM ap_stats WHERE customer_id = $1 AND box_id = $2 AND ts >= $3 AND ts <= $4 GROUP BY bucket ORDER BY bucket`,
		customerID, boxID, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.APBucket
	for rows.Next() {
		var x wnms.APBucket
		var reported int64
		if err := rows.Scan(&x.Time, &x.Bytes, &x.CoveredMS, &reported, &x.MaxClients); err != nil {
			return nil, err
		}
		x.HasTraffic = reported > 0
		out = append(out, x)
	}
	return out, rows.Err()
}
