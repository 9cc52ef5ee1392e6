package poller

import (
	"context"
	"math"
	"net/http"
	"strings"

	"github.com/wnms/wnms/internal/promwifi"
)

// Prometheus polls an AP's node exporter with OpenWrt's Wi-Fi collectors
// (prometheus-node-exporter-lua's wifi, wifi_stations and
// hostapd_stations, and dawn where the AP runs DAWN): its access point
// interfaces are the radios (channel, noise, clients; utilisation from the
// dawn collector only; no transmit power), its
// stations the clients (signal, link rates, bytes). The AP's MAC is not
// in the exposition, so the AP is known by its lowest BSSID.
type Prometheus struct {
	URL                string
	Username, Password string // HTTP basic authentication, if set
	HTTP               *http.Client
}

// Poll scrapes the exporter once.
func (p *Prometheus) Poll(ctx context.Context) (*Observation, error) {
	client := p.HTTP
	if p.Username != "" || p.Password != "" {
		c := *client
		c.Transport = basicAuth{base: client.Transport, user: p.Username, password: p.Password}
		client = &c
	}
	snap, err := promwifi.Scrape(ctx, client, p.URL)
	if err != nil {
		return nil, err
	}
	return observationOf(snap), nil
}

// observationOf turns a scrape into an observation: access point
// interfaces with a BSSID are radios; stations of other interfaces
// (client, mesh) are left out.
func observationOf(snap *promwifi.Snapshot) *Observation {
	obs := &Observation{}
	bssid := map[string]string{} // interface → BSSID
	for _, x := range snap.Radios {
		if x.BSSID == "" || (x.Mode != "" && !strings.EqualFold(x.Mode, "Master")) {
			continue
		}
		bssid[x.IfName] = strings.ToUpper(x.BSSID)
		r := Radio{BSSID: strings.ToUpper(x.BSSID), SSID: x.SSID, Channel: x.Channel, FrequencyMHz: x.FrequencyMHz,
			NoiseDBm: dBm(x.NoiseDBm), Clients: x.Stations, Utilization: x.UtilizationPct}
		obs.Radios = append(obs.Radios, r)
	}
	for _, s := range snap.Stations {
		b, ok := bssid[s.IfName]
		if !ok {
			continue
		}
		st := Station{MAC: strings.ToUpper(s.MAC), BSSID: b, SignalDBm: dBm(s.SignalDBm),
			TxRateMbps: mbps(s.TxRateKbps), RxRateMbps: mbps(s.RxRateKbps), RxBytes: s.RxBytes, TxBytes: s.TxBytes,
			InactiveMs: s.InactiveMs, ConnectedSeconds: s.ConnectedSeconds}
		obs.Stations = append(obs.Stations, st)
	}
	return obs
}

func dBm(v *float64) *int {
	if v == nil || math.IsNaN(*v) || *v < -200 || *v > 50 {
		return nil
	}
	n := int(math.Round(*v))
	return &n
}

func mbps(kbps *float64) *float64 {
	if kbps == nil || math.IsNaN(*kbps) || *kbps < 0 {
		return nil
	}
	v := *kbps / 1000
	return &v
}

// basicAuth adds HTTP basic authentication to every request.
type basicAuth struct {
	base           http.RoundTripper
	user, password string
}

func (b basicAuth) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.SetBasicAuth(b.user, b.password)
	base := b.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(req)
}
