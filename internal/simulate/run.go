package simulate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Config is what a run is told.
type Config struct {
	Sizes
	Days  int       // days of backfill before End (0: none)
	Start time.Time // start of the backfill, when later than End - Days (a resumed demo)
	Seed  uint64    // the same seed and sizes give the same records
	End   time.Time // end of the backfill (zero: now)
	TZ    *time.Location
	// OpenWeekends: the sites are as busy at weekends as on working
	// days (Network.OpenWeekends).
	OpenWeekends bool
	Incidents    []Incident // kinds and AGOs; Run places them
	Live         bool       // after the backfill, keep sending in real time
	Batch        int        // records per ingest call (0: 5000)
	// Progress, when set, gets a line that is rewritten as records go
	// out (a terminal).
	Progress io.Writer
	// Logf, when set, is told of retries and of the live loop's errors.
	Logf func(format string, args ...any)
	// OnSent, when set, is told how far the records are sent: at the end
	// of the backfill, and after each live round.
	OnSent func(until time.Time)
	// OnRound, when set, is told of each live round that went out.
	OnRound func(r LiveRound)
}

// LiveRound is what one round of the live loop sent, and how long the
// server took to take it.
type LiveRound struct {
	Until           time.Time // the round sent the records up to this time
	Events, Samples int
	Radios          int // AP radio samples
	APs             int // AP reports (heartbeats)
	Took            time.Duration
}

// Check refuses a configuration out of range.
func (c *Config) Check() error {
	if err := c.Sizes.Check(); err != nil {
		return err
	}
	if c.Days < 0 || c.Days > MaxDays {
		return fmt.Errorf("--days must be 0 to %d, not %d", MaxDays, c.Days)
	}
	if c.Batch < 0 || c.Batch > 10_000 {
		return fmt.Errorf("--batch must be 1 to 10000, not %d", c.Batch)
	}
	for _, in := range c.Incidents {
		if in.Ago > time.Duration(c.Days)*24*time.Hour {
			return fmt.Errorf("--incident %s@%s starts before the backfill (%d days)", in.Kind, in.Ago, c.Days)
		}
	}
	// Where incidents go depends on their AGOs and the number of sites
	// only: place them on a network of that many sites.
	placed := NewNetwork(0, Sizes{Sites: c.Sites, Floors: 1, APsPerFloor: 1, Clients: 1}, time.UTC).Place(c.Incidents, time.Unix(0, 0))
	if i, j := Clashes(placed); i >= 0 {
		a, b := c.Incidents[i], c.Incidents[j]
		return fmt.Errorf("--incident %s@%s and %s@%s: every site has an incident within %s of them; space them further apart or add sites",
			a.Kind, a.Ago, b.Kind, b.Ago, IncidentGap)
	}
	return nil
}

// Summary is what a run did; its JSON is the last line `wnms simulate`
// prints.
type Summary struct {
	Sites      int               `json:"sites"`
	Floors     int               `json:"floors"`
	APs        int               `json:"aps"`
	Clients    int               `json:"clients"`
	Events     int64             `json:"events"`
	Stats      int64             `json:"stats"`
	RadioStats int64             `json:"radioStats"`
	Duplicates int64             `json:"duplicates"`
	Rejected   int64             `json:"rejected"`
	Incidents  []IncidentSummary `json:"incidents,omitempty"`
}

// IncidentSummary says where and when an incident was, and what wnms
// should find (Incident.Truth): its ground truth.
type IncidentSummary struct {
	Kind    string `json:"kind"`
	Site    string `json:"site"`
	SiteID  int64  `json:"siteLocationId"`
	From    string `json:"from"` // RFC 3339, [from, to)
	To      string `json:"to"`
	FromMs  int64  `json:"fromMs"`
	ToMs    int64  `json:"toMs"`
	AP      string `json:"ap,omitempty"`
	Channel int    `json:"channel,omitempty"`
	SSID    string `json:"ssid,omitempty"`
	Band    string `json:"band,omitempty"`
	// Scope is the narrowest scope holding the incident's affected
	// clients; Equivalent lists scopes holding exactly the same ones.
	Scope      Scope   `json:"scope"`
	Equivalent []Scope `json:"equivalentScopes,omitempty"`
	Cause      Cause   `json:"cause"`
}

// counts are the running totals of a run.
type counts struct {
	events, stats, radios, duplicates, rejected, sent atomic.Int64
	firstRejection                                    atomic.Pointer[string]
}

// Run drives the server behind a: it checks that it is wnms, logs in,
// builds the network (Setup), backfills cfg.Days up to cfg.End and, with
// cfg.Live, goes on in real time until ctx ends. sum is filled as it goes,
// so it is right even when Run fails half-way.
func Run(ctx context.Context, a *API, cfg Config, sum *Summary) error {
	if err := cfg.Check(); err != nil {
		return err
	}
	if cfg.Batch == 0 {
		cfg.Batch = 5000
	}
	if cfg.TZ == nil {
		cfg.TZ = time.UTC
	}
	end := cfg.End
	if end.IsZero() {
		end = time.Now()
	}
	if err := a.Check(ctx); err != nil {
		return err
	}
	if err := a.Login(ctx); err != nil {
		return err
	}
	n := NewNetwork(cfg.Seed, cfg.Sizes, cfg.TZ)
	n.OpenWeekends = cfg.OpenWeekends
	*sum = Summary{Sites: len(n.Sites), Floors: n.Floors(), APs: len(n.APs()), Clients: len(n.Clients)}
	if err := Setup(ctx, a, n); err != nil {
		return err
	}
	incs := n.Place(cfg.Incidents, end)
	for _, in := range incs {
		sum.Incidents = append(sum.Incidents, in.Truth())
	}
	g := NewGenerator(n, incs)
	var c counts
	defer func() {
		sum.Events, sum.Stats, sum.RadioStats = c.events.Load(), c.stats.Load(), c.radios.Load()
		sum.Duplicates, sum.Rejected = c.duplicates.Load(), c.rejected.Load()
	}()
	from := end.Add(-time.Duration(cfg.Days) * 24 * time.Hour)
	if cfg.Start.After(from) {
		from = cfg.Start
	}
	if err := backfill(ctx, a, g, cfg, from.UnixMilli(), end.UnixMilli(), &c); err != nil {
		return err
	}
	if cfg.OnSent != nil {
		cfg.OnSent(end)
	}
	if r := c.firstRejection.Load(); r != nil && cfg.Logf != nil {
		cfg.Logf("the server rejected %d records; the first: %s", c.rejected.Load(), *r)
	}
	if !cfg.Live {
		return nil
	}
	return live(ctx, a, g, cfg, end.UnixMilli(), &c)
}

// chunk is how much simulated time is drawn at once.
const chunk = time.Hour

// backfill sends the records of [from, to): one goroutine draws them an
// hour at a time; one sends the clients' events and samples in batches,
// in order, since the server finds a client's roams from the order of its
// records (a record older than what it knows of the client finds none);
// one sends the radio samples beside them.
func backfill(ctx context.Context, a *API, g *Generator, cfg Config, from, to int64, c *counts) error {
	if from >= to {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	clients, radios := make(chan Records, 4), make(chan Records, 4)
	var drawn atomic.Int64 // simulated ms drawn so far, for the progress line
	go func() {
		defer close(clients)
		defer close(radios)
		put := func(ch chan<- Records, rec Records) bool {
			for len(rec.Events) > 0 || len(rec.Samples) > 0 || len(rec.Radios) > 0 {
				var b Records
				b, rec = cut(rec, cfg.Batch)
				select {
				case ch <- b:
				case <-ctx.Done():
					return false
				}
			}
			return true
		}
		for t := from; t < to; t += chunk.Milliseconds() {
			rec := g.Records(t, min(t+chunk.Milliseconds(), to))
			if !put(clients, Records{Events: rec.Events, Samples: rec.Samples}) || !put(radios, Records{Radios: rec.Radios}) {
				return
			}
			drawn.Store(min(t+chunk.Milliseconds(), to) - from)
		}
	}()
	stop := progress(cfg.Progress, c, func() float64 { return float64(drawn.Load()) / float64(to-from) })
	defer stop()
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	for _, batches := range []chan Records{clients, radios} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				if err := send(ctx, a, b, c); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// cut answers the first batch records of rec (events first, then
// client samples, then radio samples) and the rest.
func cut(rec Records, batch int) (first, rest Records) {
	k := min(len(rec.Events), batch)
	first.Events, rest.Events = rec.Events[:k], rec.Events[k:]
	batch -= k
	k = min(len(rec.Samples), batch)
	first.Samples, rest.Samples = rec.Samples[:k], rec.Samples[k:]
	batch -= k
	k = min(len(rec.Radios), batch)
	first.Radios, rest.Radios = rec.Radios[:k], rec.Radios[k:]
	return first, rest
}

// send ingests a batch of records and counts the answers.
func send(ctx context.Context, a *API, b Records, c *counts) error {
	for _, part := range []struct {
		kind string
		n    int
		f    func() (IngestResult, error)
		into *atomic.Int64
	}{
		{"clientevents", len(b.Events), func() (IngestResult, error) { return Ingest(ctx, a, "clientevents", b.Events) }, &c.events},
		{"clientstats", len(b.Samples), func() (IngestResult, error) { return Ingest(ctx, a, "clientstats", b.Samples) }, &c.stats},
		{"radiostats", len(b.Radios), func() (IngestResult, error) { return Ingest(ctx, a, "radiostats", b.Radios) }, &c.radios},
	} {
		if part.n == 0 {
			continue
		}
		res, err := part.f()
		if err != nil {
			return fmt.Errorf("ingest %s: %w", part.kind, err)
		}
		part.into.Add(int64(res.Accepted))
		c.duplicates.Add(int64(res.Duplicates))
		c.rejected.Add(int64(len(res.Rejected)))
		c.sent.Add(int64(part.n))
		if len(res.Rejected) > 0 {
			r := fmt.Sprintf("%s record %d: %s %s", part.kind, res.Rejected[0].Index, res.Rejected[0].ErrorCode, res.Rejected[0].Message)
			c.firstRejection.CompareAndSwap(nil, &r)
		}
	}
	return nil
}

// progress rewrites one line on w every half second: records sent, rate
// and time left (done says how much of the work is done, 0 to 1). The
// returned func ends the line.
func progress(w io.Writer, c *counts, done func() float64) (stop func()) {
	if w == nil {
		return func() {}
	}
	start := time.Now()
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	line := func() {
		el := time.Since(start)
		sent := c.sent.Load()
		rate := float64(sent) / max(el.Seconds(), 0.001)
		left := "?"
		if f := done(); f > 0.01 {
			left = (time.Duration(float64(el)/f) - el).Round(time.Second).String()
		}
		fmt.Fprintf(w, "\rbackfill: %d records sent (%.0f/s), %.0f%% done, %s left   ", sent, rate, 100*done(), left)
	}
	go func() {
		defer wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				line()
				fmt.Fprintln(w)
				return
			case <-t.C:
				line()
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// HeartbeatEvery is how often APs report in live mode.
const HeartbeatEvery = time.Minute

// live sends, every minute, the records of the minute gone and the APs'
// heartbeats, until ctx ends. A failed round is told and the next one
// sends its records too.
func live(ctx context.Context, a *API, g *Generator, cfg Config, from int64, c *counts) error {
	tick := time.NewTicker(HeartbeatEvery)
	defer tick.Stop()
	for {
		t0 := time.Now()
		now := t0.UnixMilli()
		rec := g.Records(from, now)
		err := sendAll(ctx, a, rec, cfg.Batch, c)
		aps := 0
		if err == nil {
			aps, err = heartbeats(ctx, a, g, now)
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && cfg.Logf != nil:
			cfg.Logf("live: %v (the next round tries again)", err)
		case err == nil:
			from = now
			if cfg.OnSent != nil {
				cfg.OnSent(time.UnixMilli(now))
			}
			if cfg.OnRound != nil {
				cfg.OnRound(LiveRound{Until: time.UnixMilli(now), Events: len(rec.Events), Samples: len(rec.Samples), Radios: len(rec.Radios),
					APs: aps, Took: time.Since(t0)})
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// sendAll sends records in batches of at most batch records.
func sendAll(ctx context.Context, a *API, rec Records, batch int, c *counts) error {
	for len(rec.Events) > 0 || len(rec.Samples) > 0 || len(rec.Radios) > 0 {
		var b Records
		b, rec = cut(rec, batch)
		if err := send(ctx, a, b, c); err != nil {
			return err
		}
	}
	return nil
}

// heartbeats reports every AP but those an ap-down incident has taken,
// with its clients and traffic, and answers how many it reported.
func heartbeats(ctx context.Context, a *API, g *Generator, now int64) (int, error) {
	recs := heartbeatRecords(g, now)
	_, err := Ingest(ctx, a, "aps", recs)
	return len(recs), err
}

// heartbeatRecords are the AP reports of a live round at now: every AP
// but those an ap-down incident has taken (an AP whose radio is broken,
// one-bad-ap, is up and reports).
func heartbeatRecords(g *Generator, now int64) []apRecord {
	assoc := g.Associated(now)
	var recs []apRecord
	for _, ap := range g.Net.APs() {
		down := false
		for _, in := range g.Incidents {
			down = down || in.Kind == APDown && in.AP == ap && now >= in.From && now < in.To
		}
		if down {
			continue
		}
		r := apRecordOf(ap)
		k := assoc[ap]
		tx := int64(k) * int64(2+rng(g.Net.Seed, 6, uint64(now/time.Minute.Milliseconds()), uint64(ap.Index)).IntN(20)) << 20
		rx := 3 * tx
		r.NumAssocClients, r.TxBytes, r.RxBytes = &k, &tx, &rx
		recs = append(recs, r)
	}
	return recs
}

// Vendor is the vendorName of simulated APs.
const Vendor = "wnms simulator"

type locID struct {
	Type string `json:"type"`
	ID   int64  `json:"id"`
}

type apRecord struct {
	Type             string        `json:"type"`
	MacAddress       string        `json:"macaddress"`
	Name             string        `json:"name"`
	Model            string        `json:"model"`
	IPAddress        string        `json:"ipAddress"`
	LocationID       locID         `json:"locationId"`
	SoftwareVersion  string        `json:"softwareVersion"`
	VendorName       string        `json:"vendorName"`
	DeviceCapability int           `json:"deviceCapability"`
	Placed           bool          `json:"placed"`
	Radios           []radioRecord `json:"radios"`
	NumAssocClients  *int          `json:"numAssocClients,omitempty"`
	TxBytes          *int64        `json:"txBytes,omitempty"`
	RxBytes          *int64        `json:"rxBytes,omitempty"`
	Position         *position     `json:"position,omitempty"`
}

// position is an AP's place on its floor's layout (meters).
type position struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

type radioRecord struct {
	MacAddress string `json:"macaddress"`
	Protocol   string `json:"protocol"`
	Channel    int    `json:"channel"`
}

func (a *AP) position() *position {
	x, y := a.Position()
	return &position{X: x, Y: y}
}

func apRecordOf(ap *AP) apRecord {
	return apRecord{Type: "ap", MacAddress: ap.MAC, Name: ap.Name, Model: "SIM-AP-520", IPAddress: ap.IP,
		LocationID: locID{"locallocationid", ap.Floor.LocID}, SoftwareVersion: "1.0.0", VendorName: Vendor,
		DeviceCapability: 3, Placed: true, // 802.11n and 802.11ac
		// In a row along the corridor of layoutOf.
		Position: ap.position(),
		Radios:   []radioRecord{{ap.Radio24.BSSID, "N", ap.Radio24.Channel}, {ap.Radio5.BSSID, "AC", ap.Radio5.Channel}}}
}

type location struct {
	Type       string `json:"type"`
	ID         locID  `json:"id"`
	ParentID   *locID `json:"parentId"`
	Name       string `json:"name"`
	TimezoneID string `json:"timezoneId"`
}

// Setup finds or creates the sites, floors and floor layouts, takes the
// time zone of sites that exist already, and reports every AP once.
func Setup(ctx context.Context, a *API, n *Network) error {
	var tree struct {
		Locations map[string]location `json:"locations"`
	}
	if err := a.JSON(ctx, http.MethodGet, "/V2/locations/tree", nil, &tree); err != nil {
		return fmt.Errorf("read the location tree: %w", err)
	}
	find := func(parent int64, typ, name string) *location {
		for _, l := range tree.Locations {
			if l.ParentID != nil && l.ParentID.ID == parent && l.Type == typ && l.Name == name {
				return &l
			}
		}
		return nil
	}
	create := func(parent int64, typ, name, tz string) (*location, error) {
		in := map[string]any{"parentLocation": locID{"locallocationid", parent},
			"location": map[string]any{"type": typ, "name": name}}
		if tz != "" {
			in["location"].(map[string]any)["timezoneId"] = tz
		}
		var l location
		if err := a.JSON(ctx, http.MethodPut, "/V2/locations", in, &l); err != nil {
			return nil, fmt.Errorf("create %s %q: %w", typ, name, err)
		}
		return &l, nil
	}
	for _, s := range n.Sites {
		l := find(0, "folderlocation", s.Name)
		var err error
		if l == nil {
			if l, err = create(0, "folderlocation", s.Name, s.TZ.String()); err != nil {
				return err
			}
		}
		s.LocID = l.ID.ID
		if tz, err := wnms.LoadLocation(l.TimezoneID); err == nil && l.TimezoneID != "" {
			s.TZ = tz // the site's own clock, when it exists already
		}
		for _, f := range s.Floors {
			fl := find(s.LocID, "floorlocation", f.Name)
			if fl == nil {
				if fl, err = create(s.LocID, "floorlocation", f.Name, ""); err != nil {
					return err
				}
			}
			f.LocID = fl.ID.ID
			q := "/V5/layouts?locationid=" + url.QueryEscape(fmt.Sprint(f.LocID))
			err := a.JSON(ctx, http.MethodGet, q, nil, nil)
			var ae *apiError
			if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
				err = a.JSON(ctx, http.MethodPost, q, layoutOf(f), nil)
			}
			if err != nil {
				return fmt.Errorf("layout of %s %s: %w", s.Name, f.Name, err)
			}
		}
	}
	recs := make([]apRecord, 0, len(n.APs()))
	for _, ap := range n.APs() {
		recs = append(recs, apRecordOf(ap))
	}
	res, err := Ingest(ctx, a, "aps", recs)
	if err != nil {
		return fmt.Errorf("report the APs: %w", err)
	}
	if len(res.Rejected) > 0 {
		return fmt.Errorf("the server refused AP %d: %s %s", res.Rejected[0].Index, res.Rejected[0].ErrorCode, res.Rejected[0].Message)
	}
	return nil
}

// layoutOf is a floor 10 m deep with room for its APs along a corridor:
// concrete outer walls and a glass wall between offices and corridor.
func layoutOf(f *Floor) map[string]any {
	length := floorLength(f)
	wall := func(x, y, breadth, angle float64, material string) map[string]any {
		return map[string]any{"type": "RectangularObstacle", "centerX": x, "centerY": y, "angle": angle,
			"thickness": 0.3, "materialId": material, "breadth": breadth, "height": 3}
	}
	return map[string]any{"type": "floorlayout", "length": length, "width": 20, "unit": "METER",
		"obstaclesInfo": map[string]any{"obstacles": []any{
			wall(length/2, 0, length, 0, "CONCRETE"), wall(length/2, 20, length, 0, "CONCRETE"),
			wall(0, 10, 20, 90, "CONCRETE"), wall(length, 10, 20, 90, "CONCRETE"),
			wall(length/2, 12, length, 0, "GLASS"),
		}}}
}
