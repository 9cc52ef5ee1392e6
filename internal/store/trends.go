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
	rows, err := s.tr.QueryContext(ctx, `SELECT (ts / `+b+`) * `+b+` AS bucket, avg(data_rate), avg(retry_pct), avg(rssi), avg(snr),
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
		var rate, retry, rssi, snr sql.NullFloat64 // NULL: only samples of traffic (no radio metrics)
		if err := rows.Scan(&x.Time, &rate, &retry, &rssi, &snr, &x.Bytes, &reported); err != nil {
			return nil, err
		}
		x.DataRate, x.Retry, x.RSSI, x.HasRadio = rate.Float64, retry.Float64, rssi.Float64, rate.Valid
		x.HasTraffic, x.SNR = reported > 0, floatOf(snr)
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

var radioColumns = []string{"customer_id", "bssid", "ts", "box_id", "location_id", "channel", "band", "utilization", "noise", "clients", "tx_power"}

// InsertRadioStats stores AP radio samples on the telemetry database; a
// sample of a radio at a timestamp already stored is skipped. The answer
// is how many were stored.
func (s *Store) InsertRadioStats(ctx context.Context, customerID int64, samples []*wnms.RadioSample) (int, error) {
	rows := make([][]any, len(samples))
	for i, x := range samples {
		rows[i] = []any{customerID, x.BSSID, x.Timestamp, x.BoxID, x.LocationID, nullInt(x.Channel), x.Band,
			nullFloat(x.Utilization), nullInt(x.Noise), nullInt(x.Clients), nullInt(x.TxPower)}
	}
	var n int64
	err := s.withDays(ctx, len(samples), func(i int) int64 { return samples[i].Timestamp }, func() error {
		return s.bulk(ctx, s.tw, func(b *bulkTx) error {
			var err error
			n, err = b.Insert(ctx, "radio_stats", radioColumns, rows, "ON CONFLICT (customer_id, bssid, ts) DO NOTHING")
			return err
		})
	})
	return int(n), err
}

// RadioTrend buckets an AP's radio samples by 5 minutes, radio by radio
// (BSSID order), oldest bucket first: the highest channel of the bucket
// (a radio that changed channel within it), the mean utilisation and
// noise, the most clients and the highest transmit power.
func (s *Store) RadioTrend(ctx context.Context, customerID, boxID int64, from, to int64) ([]wnms.RadioBucket, error) {
	b := strconv.Itoa(bucketMS)
	rows, err := s.tr.QueryContext(ctx, `SELECT bssid, max(band), (ts / `+b+`) * `+b+` AS bucket,
		max(channel), avg(utilization), avg(noise), max(clients), max(tx_power)
		FROM radio_stats WHERE customer_id = $1 AND box_id = $2 AND ts >= $3 AND ts <= $4
		GROUP BY bssid, bucket ORDER BY bssid, bucket`, customerID, boxID, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []wnms.RadioBucket
	for rows.Next() {
		var x wnms.RadioBucket
		var ch, clients, power sql.NullInt64
		var util, noise sql.NullFloat64
		if err := rows.Scan(&x.BSSID, &x.Band, &x.Time, &ch, &util, &noise, &clients, &power); err != nil {
			return nil, err
		}
		x.Channel, x.Clients, x.TxPower = intOf(ch), intOf(clients), intOf(power)
		x.Utilization, x.Noise = floatOf(util), floatOf(noise)
		out = append(out, x)
	}
	return out, rows.Err()
}

func nullInt(v *int) any {
	if v == nil {
		return nil
	}
	return int64(*v)
}

func nullFloat(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func nullBool(v *bool) any {
	switch {
	case v == nil:
		return nil
	case *v:
		return int64(1)
	}
	return int64(0)
}

func intOf(v sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	n := int(v.Int64)
	return &n
}

func floatOf(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	return &v.Float64
}
