// Package promwifi reads the Wi-Fi state of an OpenWrt access point from its
// Prometheus node exporter: OpenWrt's prometheus-node-exporter-lua with the
// wifi_stations and hostapd_stations collectors (and the wifi collector's
// per-interface series when it is installed). It scrapes the exporter's
// text exposition, parses each Wi-Fi line with the Prometheus project's own
// text parser (github.com/prometheus/common/expfmt) and returns typed values
// per radio interface and per associated station.
//
// The package reports what the exporter says and nothing more: a value the
// exporter does not give is a nil pointer (or an empty string), never a
// guess. Series that cannot be trusted — no MAC label, NaN, a value outside
// what the quantity can be — are skipped and counted in Snapshot.Skipped,
// not fatal. Everything else in the exposition (node_* series, histograms,
// summaries, other collectors) is ignored.
//
// What the collectors write, and so what this package reads:
//
//	wifi collector (iwinfo), one series per interface, labels
//	{ifname, device, ssid, bssid, channel, frequency, mode, country}:
//	  wifi_network_noise_dbm      noise floor, dBm; 0 when the driver has none
//	  wifi_network_signal_dbm     iwinfo signal, dBm; -255 when unknown
//	  wifi_network_bitrate        iwinfo bit rate, kbit/s; 0 when unknown
//	  wifi_network_quality        percent (not read: it is derived from signal)
//
//	wifi_stations collector (iwinfo assoclist), labels {ifname, mac}:
//	  wifi_stations{ifname}                                 stations on the interface
//	  wifi_station_signal_dbm                               dBm (omitted when 0)
//	  wifi_station_inactive_milliseconds                    ms since last frame
//	  wifi_station_expected_throughput_kilobits_per_second  kbit/s (omitted when 0)
//	  wifi_station_transmit_kilobits_per_second             tx PHY rate, kbit/s (omitted when 0)
//	  wifi_station_receive_kilobits_per_second              rx PHY rate, kbit/s (omitted when 0)
//	  wifi_station_{transmit,receive}_packets_total         packets
//	  wifi_station_{transmit,receive}_bytes_total           bytes (newer iwinfo only)
//
//	hostapd_stations collector (hostapd_cli all_sta), labels
//	{vif, station, ssid, bssid, channel, frequency, encryption}
//	(OpenWrt 22.03 and later; 21.02 and earlier wrote {ifname, station} and
//	the older names in brackets):
//	  hostapd_station_signal_dbm               dBm [hostapd_station_signal]
//	  hostapd_station_inactive_seconds         s   [hostapd_station_inactive_msec, ms]
//	  hostapd_station_connected_seconds_total  s   [hostapd_station_connected_time]
//	  hostapd_station_{receive,transmit}_{bytes,packets}_total  (0 when hostapd gave none)
//	                                               [hostapd_station_{rx,tx}_{bytes,packets}]
//	  hostapd_station_flag_{auth,assoc,ht,vht,he,wmm,mfp}  0 or 1
//
//	dawn collector (DAWN's get_network, the AP's own BSSs), labels
//	{ssid, bssid, freq, hostname, ...}:
//	  dawn_ap_channel_utilization_ratio   hostapd's channel utilisation, 0–1
//	                                      (its 0–255 over 255), matched to the
//	                                      wifi collector's interface by BSSID
//
// Not read: hostapd_station_flag_short_preamble (the collector splits flags
// on upper-case runs, so SHORT_PREAMBLE never matches and the series is
// always 0), the 21.02 flag series hostapd_station_{ht,vht,wmm,mfp} (they
// matched character classes, so they are 1 for nearly every station),
// hostapd_station_sae_group, hostapd_station_vht_capb_*, wifi_network_quality,
// dawn_ap_stations_total and dawn_station_signal_dbm (the wifi and station
// collectors say the same of the AP's own clients).
//
// The Lua exporter does not escape label values: an SSID with a double
// quote, a backslash or a newline, or bytes that are not UTF-8, makes its
// lines unparseable. Those lines are skipped and counted as Malformed; the
// rest of the exposition still reads.
package promwifi

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
)

// Limits on what one scrape may cost, whatever the exporter sends.
const (
	// MaxBodyBytes caps the exposition read from the exporter (after any
	// transfer decompression); a longer one is ErrTooLarge.
	MaxBodyBytes = 8 << 20
	// MaxLineBytes caps one line of the exposition; a longer Wi-Fi line is
	// skipped as Malformed, a longer other line is ignored.
	MaxLineBytes = 16 << 10
	// MaxRadios caps the interfaces kept from one exposition; series about
	// further interfaces are skipped as OverLimit.
	MaxRadios = 256
	// MaxStations caps the stations kept from one exposition; series about
	// further stations are skipped as OverLimit.
	MaxStations = 4096
)

// acceptHeader asks for the classic text format, so an exporter that could
// answer in OpenMetrics or protobuf answers in text.
const acceptHeader = "text/plain; version=0.0.4"

var (
	// ErrNotText is returned by Scrape when the exporter answers with a
	// content type other than text/plain (OpenMetrics, protobuf, HTML).
	ErrNotText = errors.New("promwifi: exporter did not answer in the Prometheus text format")
	// ErrTooLarge is returned when the exposition is longer than
	// MaxBodyBytes.
	ErrTooLarge = errors.New("promwifi: exposition longer than the size cap")
)

// StatusError is returned by Scrape when the exporter answers with a status
// other than 200 OK.
type StatusError struct {
	StatusCode int
	Status     string
}

// Error says which status the exporter answered with.
func (e *StatusError) Error() string {
	return fmt.Sprintf("promwifi: exporter answered %s", e.Status)
}

// Snapshot is what one exposition says about the access point's Wi-Fi.
type Snapshot struct {
	// Radios holds one entry per Wi-Fi interface named by any Wi-Fi series,
	// sorted by IfName.
	Radios []Radio
	// Stations holds one entry per associated station and interface, sorted
	// by IfName then MAC. A station reported by both wifi_stations and
	// hostapd_stations on the same interface is one entry.
	Stations []Station
	// Collectors says which Wi-Fi collectors the exposition came from
	// (declared or sampled), so "no stations" can be told apart from "no
	// collector installed".
	Collectors Collectors
	// Skipped counts the Wi-Fi series that were not used, by reason.
	Skipped Skipped
}

// Radio returns the radio interface named ifname, if the snapshot has one.
func (s *Snapshot) Radio(ifname string) (Radio, bool) {
	for _, r := range s.Radios {
		if r.IfName == ifname {
			return r, true
		}
	}
	return Radio{}, false
}

// Collectors says which of OpenWrt's Wi-Fi collectors appear in an
// exposition.
type Collectors struct {
	Wifi            bool // wifi: wifi_network_* series
	WifiStations    bool // wifi_stations: wifi_stations and wifi_station_* series
	HostapdStations bool // hostapd_stations: hostapd_station_* series
	Dawn            bool // dawn: dawn_* series
}

// Skipped counts Wi-Fi series (exposition lines) that could not be used.
// Series the package knows and does not read (see the package
// documentation) are not counted.
type Skipped struct {
	// Malformed lines have a Wi-Fi metric name but the text parser rejects
	// them (for example an SSID with an unescaped quote), or they are longer
	// than MaxLineBytes.
	Malformed int
	// NoMAC series are station series without a MAC label (mac or station)
	// that parses as a 6-byte MAC address.
	NoMAC int
	// NoInterface series have no interface label (ifname or vif).
	NoInterface int
	// NaN series have a NaN or infinite value.
	NaN int
	// OutOfRange series have a value the quantity cannot take: a signal or
	// noise above 0 dBm or below -150 dBm, a negative or fractional counter,
	// a flag other than 0 or 1, a negative rate.
	OutOfRange int
	// OverLimit series are about a radio or station beyond MaxRadios or
	// MaxStations.
	OverLimit int
}

// Total is the number of skipped series.
func (s Skipped) Total() int {
	return s.Malformed + s.NoMAC + s.NoInterface + s.NaN + s.OutOfRange + s.OverLimit
}

// Radio is one Wi-Fi interface of the access point (one BSS of a radio, or a
// client or mesh interface), as the exporter reports it. Several interfaces
// share a radio (Device) when it serves several SSIDs.
type Radio struct {
	// IfName is the interface name, e.g. "wlan0" or "phy1-ap0".
	IfName string
	// Device is the radio's name in OpenWrt's wireless configuration, e.g.
	// "radio0" (wifi collector only); empty when unknown.
	Device string
	// SSID, BSSID (lower-case, colon-separated), Mode (iwinfo's words:
	// "Master", "Client", "Mesh Point", ...), Country (ISO code) and
	// Encryption (OpenWrt's option, e.g. "psk2", "sae-mixed";
	// hostapd_stations only) are empty when unknown.
	SSID       string
	BSSID      string
	Mode       string
	Country    string
	Encryption string
	// Channel and FrequencyMHz are 0 when unknown.
	Channel      int
	FrequencyMHz int
	// NoiseDBm is the noise floor in dBm; nil when the driver reports none
	// (the collector writes 0 then).
	NoiseDBm *float64
	// SignalDBm is iwinfo's signal for the interface in dBm (for an access
	// point, the average of its stations' signals); nil when unknown, e.g.
	// with no station associated.
	SignalDBm *float64
	// BitrateKbps is iwinfo's bit rate for the interface in kbit/s; nil when
	// unknown.
	BitrateKbps *float64
	// Stations is the number of associated stations the wifi_stations
	// collector counted; nil when that collector is absent.
	Stations *int
	// UtilizationPct is the share of time the interface's channel was
	// busy, 0–100, as hostapd measures it and DAWN reports it (dawn
	// collector, matched by BSSID); nil when unknown.
	UtilizationPct *float64
}

// Station is one station (client) associated with one interface of the
// access point. Values from the wifi_stations collector take precedence;
// hostapd_stations fills what wifi_stations does not give.
type Station struct {
	// IfName is the interface the station is associated with.
	IfName string
	// MAC is the station's address, lower-case and colon-separated.
	MAC string
	// SignalDBm is the station's signal as the AP receives it, in dBm; nil
	// when unknown.
	SignalDBm *float64
	// NoiseDBm is the noise floor of the station's interface (copied from
	// the wifi collector's series for IfName); nil when unknown.
	NoiseDBm *float64
	// RxRateKbps and TxRateKbps are the PHY rates of the last frame received
	// from and sent to the station, in kbit/s: link rates, not traffic. Nil
	// when unknown.
	RxRateKbps *float64
	TxRateKbps *float64
	// ExpectedThroughputKbps is the driver's estimate of achievable
	// throughput in kbit/s (ath9k, mt76 and a few others); nil when unknown.
	ExpectedThroughputKbps *float64
	// RxBytes, TxBytes, RxPackets and TxPackets are counters since the
	// station associated, seen from the AP (Rx: from the station). Nil when
	// not reported. hostapd_stations writes 0 when hostapd gave no value, so
	// a 0 from it may mean unknown.
	RxBytes   *uint64
	TxBytes   *uint64
	RxPackets *uint64
	TxPackets *uint64
	// InactiveMs is the time since the AP last heard the station, in
	// milliseconds; nil when unknown.
	InactiveMs *uint64
	// ConnectedSeconds is how long the station has been associated
	// (hostapd_stations only); nil when unknown.
	ConnectedSeconds *uint64
	// Authenticated and Associated are hostapd's AUTH and ASSOC flags; HT,
	// VHT, HE, WMM and MFP say what the association uses. All nil when
	// hostapd_stations is absent or gave no flags. The collector does not
	// export hostapd's AUTHORIZED flag, so whether the station completed
	// its 802.1X or key handshake is not known from the exporter.
	Authenticated *bool
	Associated    *bool
	HT            *bool
	VHT           *bool
	HE            *bool
	WMM           *bool
	MFP           *bool
}

// Scrape fetches the exposition at url with client (http.DefaultClient when
// nil) and parses it. It asks for the text format and refuses any other:
// a response that is not 200 OK is a *StatusError, a content type other than
// text/plain is ErrNotText, a body longer than MaxBodyBytes is ErrTooLarge;
// transport and context errors are returned as they come (wrapped). Scrape
// may be called concurrently.
func Scrape(ctx context.Context, client *http.Client, url string) (*Snapshot, error) {
	if client == nil {
		client = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("promwifi: %w", err)
	}
	req.Header.Set("Accept", acceptHeader)
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("promwifi: scrape: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "text/plain" {
			return nil, fmt.Errorf("%w (Content-Type %q)", ErrNotText, ct)
		}
	}
	s, err := Parse(resp.Body)
	if err != nil {
		return nil, err
	}
	return s, nil
}
