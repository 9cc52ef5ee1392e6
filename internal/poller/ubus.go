package poller

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/ubus"
	"github.com/wnms/wnms/internal/wnms"
)

// Ubus polls an OpenWrt AP's rpcd over HTTP: hostapd's interfaces are
// its radios (hostapd.<if> get_status: BSSID, SSID, channel, the
// channel's busy time; iwinfo info: noise floor, transmit power, the
// radio's hardware), their stations the clients (iwinfo assoclist:
// signal, rates, bytes; hostapd get_clients where assoclist is not
// allowed). The interface list is read at every poll, so a rebooted AP or
// a changed configuration is followed. The AP's MAC is not asked for: it
// is known by its lowest BSSID.
//
// Follow reads uhttpd's event stream of every interface (hostapd's
// notifications): a client's sta-authorized is a Success (with its
// association's time and signal, from the assoc before it, and a fast
// transition when it authorized with FT), disassoc and deauth are
// Disassociated events, key-mismatch a wrong-passphrase Failure.
type Ubus struct {
	c *ubus.Client

	mu     sync.Mutex
	radios map[string]Radio     // by interface, as the last poll saw them
	assocs map[string]assocSeen // by client MAC: its last association
}

// assocSeen is a client's association as its assoc event told it.
type assocSeen struct {
	at     time.Time
	bssid  string
	signal int
}

// maxAssocs bounds the associations remembered for their sta-authorized
// (hostapd sends it within seconds); the oldest go first.
const maxAssocs = 4096

// NewUbus returns the driver of p, talking through client.
func NewUbus(p wnms.Poller, client *http.Client) *Ubus {
	return &Ubus{c: &ubus.Client{URL: p.URL, Username: p.Username, Password: p.Password, HTTP: client, Timeout: HTTPTimeout},
		radios: map[string]Radio{}, assocs: map[string]assocSeen{}}
}

// Poll reads the AP's radios and clients once.
func (u *Ubus) Poll(ctx context.Context) (*Observation, error) {
	ifaces, err := u.c.HostapdInterfaces(ctx)
	if err != nil {
		return nil, err
	}
	obs := &Observation{}
	radios := map[string]Radio{}
	for _, ifc := range ifaces {
		st, err := u.c.HostapdStatus(ctx, ifc)
		if errors.Is(err, ubus.ErrNotFound) {
			continue // gone since the list: the next poll lists again
		}
		if err != nil {
			return nil, err
		}
		if st.BSSID == "" || (st.Status != "" && st.Status != "ENABLED") {
			continue
		}
		r := Radio{BSSID: strings.ToUpper(st.BSSID), SSID: st.SSID, Channel: st.Channel, FrequencyMHz: st.Freq}
		if busy, ok := st.BusyPercent(); ok {
			r.Utilization = &busy
		}
		if info, err := u.c.IwinfoInfo(ctx, ifc); err == nil {
			if info.Noise < 0 {
				r.NoiseDBm = wnms.Ptr(info.Noise)
			}
			if info.TXPower != 0 {
				r.TxPowerDBm = wnms.Ptr(info.TXPower)
			}
			if obs.AP.Model == "" {
				obs.AP.Model = info.Hardware.Name
			}
		} else if !errors.Is(err, ubus.ErrAccessDenied) && !errors.Is(err, ubus.ErrNotFound) {
			return nil, err
		}
		stations, err := u.stations(ctx, ifc, r.BSSID)
		if err != nil {
			return nil, err
		}
		r.Clients = wnms.Ptr(len(stations))
		obs.Radios = append(obs.Radios, r)
		obs.Stations = append(obs.Stations, stations...)
		radios[ifc] = r
	}
	u.mu.Lock()
	u.radios = radios
	u.mu.Unlock()
	return obs, nil
}

// stations are the clients of interface ifc: from iwinfo assoclist,
// else from hostapd get_clients (whose metrics older builds lack).
func (u *Ubus) stations(ctx context.Context, ifc, bssid string) ([]Station, error) {
	list, err := u.c.IwinfoAssoclist(ctx, ifc)
	if err == nil {
		out := make([]Station, 0, len(list))
		for _, x := range list {
			s := Station{MAC: strings.ToUpper(x.MAC), BSSID: bssid, SignalDBm: known(x.Signal),
				TxRateMbps: rateMbps(x.TX.Rate), RxRateMbps: rateMbps(x.RX.Rate)}
			if x.RX.Bytes > 0 || x.TX.Bytes > 0 {
				s.RxBytes, s.TxBytes = wnms.Ptr(uint64(x.RX.Bytes)), wnms.Ptr(uint64(x.TX.Bytes))
			}
			out = append(out, s)
		}
		return out, nil
	}
	if !errors.Is(err, ubus.ErrAccessDenied) && !errors.Is(err, ubus.ErrNotFound) {
		return nil, err
	}
	cl, err := u.c.HostapdClients(ctx, ifc)
	if err != nil {
		return nil, err
	}
	out := make([]Station, 0, len(cl.Clients))
	for _, mac := range slices.Sorted(maps.Keys(cl.Clients)) {
		x := cl.Clients[mac]
		if !x.Assoc {
			continue
		}
		s := Station{MAC: strings.ToUpper(mac), BSSID: bssid, SignalDBm: known(x.Signal),
			TxRateMbps: rateMbps(int(x.Rate.TX)), RxRateMbps: rateMbps(int(x.Rate.RX))}
		if x.Bytes.RX > 0 || x.Bytes.TX > 0 {
			s.RxBytes, s.TxBytes = wnms.Ptr(uint64(max(x.Bytes.RX, 0))), wnms.Ptr(uint64(max(x.Bytes.TX, 0)))
		}
		out = append(out, s)
	}
	return out, nil
}

// known is a dBm value the AP gave (0: none).
func known(dbm int) *int {
	if dbm >= 0 {
		return nil
	}
	return &dbm
}

func rateMbps(kbps int) *float64 {
	if kbps <= 0 {
		return nil
	}
	v := float64(kbps) / 1000
	return &v
}

// Follow reads the event streams of the AP's interfaces until one ends
// (the caller subscribes again, after a wait) or ctx ends.
func (u *Ubus) Follow(ctx context.Context, emit func([]wnms.EventRecord)) error {
	ifaces, err := u.c.HostapdInterfaces(ctx)
	if err != nil {
		return err
	}
	if len(ifaces) == 0 {
		return errNoRadio
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, len(ifaces))
	for _, ifc := range ifaces {
		go func() { errs <- u.follow(ctx, ifc, emit) }()
	}
	err = <-errs // the first to end ends them all
	cancel()
	for range len(ifaces) - 1 {
		<-errs
	}
	return err
}

// follow reads one interface's events.
func (u *Ubus) follow(ctx context.Context, ifc string, emit func([]wnms.EventRecord)) error {
	s, err := u.c.Subscribe(ctx, "hostapd."+ifc)
	if err != nil {
		return err
	}
	defer s.Close()
	for {
		ev, err := s.Next()
		if errors.Is(err, ubus.ErrBadReply) && ctx.Err() == nil && ev.Type != "" {
			continue // one event's data was not JSON; the stream goes on
		}
		if err != nil {
			return err
		}
		if rec, ok := u.record(ctx, ifc, ev, time.Now()); ok {
			emit([]wnms.EventRecord{rec})
		}
	}
}

// record turns one of hostapd's notifications into a client event.
func (u *Ubus) record(ctx context.Context, ifc string, ev ubus.Event, now time.Time) (wnms.EventRecord, bool) {
	mac := strings.ToUpper(ev.Address)
	if mac == "" {
		return wnms.EventRecord{}, false
	}
	u.mu.Lock()
	r, have := u.radios[ifc]
	u.mu.Unlock()
	if !have {
		st, err := u.c.HostapdStatus(ctx, ifc)
		if err != nil || st.BSSID == "" {
			return wnms.EventRecord{}, false
		}
		r = Radio{BSSID: strings.ToUpper(st.BSSID), SSID: st.SSID, Channel: st.Channel, FrequencyMHz: st.Freq}
	}
	if !placeable(r) {
		return wnms.EventRecord{}, false
	}
	ts := now.UnixMilli()
	rec := wnms.EventRecord{MacAddress: &mac, BSSID: wnms.Ptr(r.BSSID), Channel: r.Channel, SSID: r.SSID, Timestamp: &ts}
	switch ev.Type {
	case "assoc":
		u.mu.Lock()
		if len(u.assocs) >= maxAssocs {
			u.forgetOldest()
		}
		u.assocs[mac] = assocSeen{at: now, bssid: r.BSSID, signal: ev.Signal}
		u.mu.Unlock()
		return rec, false // its Success comes with sta-authorized
	case "sta-authorized":
		u.mu.Lock()
		a, ok := u.assocs[mac]
		delete(u.assocs, mac)
		u.mu.Unlock()
		rec.EventType = wnms.Ptr(wnms.Success)
		rec.AuthenticationTimestamp = &ts
		if ok && a.bssid == r.BSSID && now.Sub(a.at) < time.Minute {
			rec.AssociationTimestamp = wnms.Ptr(a.at.UnixMilli())
			rec.RSSI = known(a.signal)
		}
		if ev.AuthAlg == "ft" {
			rec.FastTransition = wnms.Ptr(true)
		}
		return rec, true
	case "disassoc", "deauth", "local-deauth", "inactive-deauth":
		rec.EventType = wnms.Ptr(wnms.Intermediate)
		rec.CategoryCode, rec.TypeCode = wnms.Ptr(wnms.CategoryAssociation), wnms.Ptr(wnms.TypeDisassociated)
		return rec, true
	case "key-mismatch":
		rec.EventType = wnms.Ptr(wnms.Failure)
		rec.FailureCode, rec.SubFailureCode = wnms.Ptr(wnms.CategoryAuthentication), wnms.Ptr(wnms.FailWrongPSK)
		return rec, true
	}
	return wnms.EventRecord{}, false
}

// forgetOldest drops the oldest remembered association (u.mu held).
func (u *Ubus) forgetOldest() {
	var oldest string
	var at time.Time
	for mac, a := range u.assocs {
		if oldest == "" || a.at.Before(at) {
			oldest, at = mac, a.at
		}
	}
	delete(u.assocs, oldest)
}
