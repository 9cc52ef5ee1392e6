package store

import (
	"context"
	"maps"
	"slices"
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

// The radio service levels' hourly counts (coverage, capacity, roaming)
// in service_level_radio, kept like the attempts' (servicelevels.go): a
// batch of samples all stored adds its counts; a batch of which some
// were not (a retry) makes the sample counts of the hours it names again
// from the stored samples. Roams are stored one by one, so each one's
// counts are added exactly once.

var radioLevelColumns = []string{"customer_id", "hour", "location_id", "ap_box_id", "ssid", "band",
	"samples", "weak", "util_known", "busy", "roams", "slow_roams", "suboptimal_roams"}

// radioTally is the counts of a batch by place.
type radioTally map[wnms.ServicePlace]*wnms.ServiceCounts

func (t radioTally) at(p wnms.ServicePlace) *wnms.ServiceCounts {
	c := t[p]
	if c == nil {
		c = &wnms.ServiceCounts{}
		t[p] = c
	}
	return c
}

// placeOf is where a record counts: its hour, location, AP, SSID and band.
func placeOf(ts, location int64, ap *int64, ssid string, channel int) wnms.ServicePlace {
	p := wnms.ServicePlace{Hour: wnms.HourOf(ts), LocationID: location, SSID: ssid}
	if ap != nil {
		p.APBoxID = *ap
	}
	if channel > 0 {
		p.Band = wnms.BandOf(channel)
	}
	return p
}

// addSample counts a sample with radio metrics.
func (t radioTally) addSample(x *wnms.Sample) {
	if x.NoRadio {
		return
	}
	c := t.at(placeOf(x.Timestamp, x.LocationID, x.APBoxID, x.SSID, x.Channel))
	c.Samples++
	if x.RSSI < wnms.CoverageRSSI {
		c.Weak++
	}
	if x.Busy != nil {
		c.UtilKnown++
		if *x.Busy {
			c.Busy++
		}
	}
}

func (t radioTally) rows(customerID int64) [][]any {
	rows := make([][]any, 0, len(t))
	for _, p := range slices.SortedFunc(maps.Keys(t), compareServicePlaces) {
		c := t[p]
		rows = append(rows, []any{customerID, p.Hour, p.LocationID, p.APBoxID, p.SSID, p.Band,
			c.Samples, c.Weak, c.UtilKnown, c.Busy, c.Roams, c.SlowRoams, c.SuboptimalRoams})
	}
	return rows
}

// addRadioLevels adds a tally's counts to those stored.
func addRadioLevels(ctx context.Context, b *bulkTx, customerID int64, t radioTally) error {
	if len(t) == 0 {
		return nil
	}
	set := ""
	for i, c := range radioLevelColumns[6:] {
		if i > 0 {
			set += ", "
		}
		set += c + " = service_level_radio." + c + " + excluded." + c
	}
	_, err := b.Insert(ctx, "service_level_radio", radioLevelColumns, t.rows(customerID),
		"ON CONFLICT (customer_id, hour, location_id, ap_box_id, ssid, band) DO UPDATE SET "+set)
	return err
}

// keepRadioLevels brings the sample counts up to date with a batch of
// samples of which stored were stored.
func keepRadioLevels(ctx context.Context, b *bulkTx, customerID int64, samples []*wnms.Sample, stored int64) error {
	if stored == 0 {
		return nil
	}
	t := radioTally{}
	for _, x := range samples {
		t.addSample(x)
	}
	if len(t) == 0 {
		return nil
	}
	var hours []int64
	for _, p := range slices.SortedFunc(maps.Keys(t), compareServicePlaces) {
		if len(hours) == 0 || hours[len(hours)-1] != p.Hour {
			hours = append(hours, p.Hour)
		}
	}
	all := stored == int64(len(samples))
	if err := lockHours(ctx, b, customerID, hours, !all); err != nil {
		return err
	}
	if all {
		return addRadioLevels(ctx, b, customerID, t)
	}
	for _, h := range hours {
		if err := recountRadioHour(ctx, b, customerID, h); err != nil {
			return err
		}
	}
	return nil
}

// recountRadioHour makes the sample counts of an hour again from its
// stored samples (the roam counts are kept).
func recountRadioHour(ctx context.Context, b *bulkTx, customerID, hour int64) error {
	var out [][]any
	err := b.Query(ctx, `SELECT location_id, coalesce(ap_box_id, 0), ssid,
		CASE WHEN channel BETWEEN 1 AND 14 THEN '`+wnms.Band24GHz+`' WHEN channel > 14 THEN '`+wnms.Band5GHz+`' ELSE '' END AS band,
		count(*), sum(CASE WHEN rssi < `+strconv.Itoa(wnms.CoverageRSSI)+` THEN 1 ELSE 0 END), count(busy), coalesce(sum(busy), 0)
		FROM client_stats WHERE customer_id = $1 AND ts >= $2 AND ts < $3 AND rssi IS NOT NULL
		GROUP BY location_id, coalesce(ap_box_id, 0), ssid, band`, []any{customerID, hour, hour + wnms.ServiceLevelHour},
		func(scan func(dest ...any) error) error {
			p := wnms.ServicePlace{Hour: hour}
			var c wnms.ServiceCounts
			if err := scan(&p.LocationID, &p.APBoxID, &p.SSID, &p.Band, &c.Samples, &c.Weak, &c.UtilKnown, &c.Busy); err != nil {
				return err
			}
			out = append(out, []any{customerID, p.Hour, p.LocationID, p.APBoxID, p.SSID, p.Band, c.Samples, c.Weak, c.UtilKnown, c.Busy,
				int64(0), int64(0), int64(0)})
			return nil
		})
	if err != nil {
		return err
	}
	_, err = b.Insert(ctx, "service_level_radio", radioLevelColumns, out,
		`ON CONFLICT (customer_id, hour, location_id, ap_box_id, ssid, band) DO UPDATE SET samples = excluded.samples,
		weak = excluded.weak, util_known = excluded.util_known, busy = excluded.busy`)
	return err
}

// insertRoams stores roams one by one and counts those that were new in
// the roaming service level (a retried batch finds its roams stored
// already); it answers how many of the first sent (those of the batch,
// not derived from it) were new.
func insertRoams(ctx context.Context, b *bulkTx, customerID int64, roams []wnms.DerivedEvent, sent int) (int64, error) {
	t := radioTally{}
	var stored int64
	for i, d := range roams {
		n, err := b.Insert(ctx, "client_events", eventColumns, eventRows(customerID, []*wnms.ClientEvent{d.Event}, [][]byte{d.Body}),
			"ON CONFLICT (customer_id, event_id, ts) DO NOTHING")
		if err != nil {
			return 0, err
		}
		if n == 0 {
			continue
		}
		if i < sent {
			stored++
		}
		e := d.Event
		if e.Roam == nil {
			continue
		}
		c := t.at(placeOf(e.Timestamp, e.LocationID, e.APBoxID, e.SSID, e.Channel))
		// A roam both slow and suboptimal counts as slow.
		c.Roams++
		if e.Roam.Slow {
			c.SlowRoams++
		} else if e.Roam.Suboptimal {
			c.SuboptimalRoams++
		}
	}
	return stored, addRadioLevels(ctx, b, customerID, t)
}
