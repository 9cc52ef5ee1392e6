package promwifi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func f64(v float64) *float64 { return &v }
func u64(v uint64) *uint64   { return &v }
func bl(v bool) *bool        { return &v }
func in(v int) *int          { return &v }

// recording returns a file of testdata. The verbatim recording starts with
// the shell prompt its author typed ("root@OpenWrt:~# curl ..."); that line
// is not part of what the exporter sent, so it is cut here.
func recording(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(b, []byte("root@")) {
		b = b[bytes.IndexByte(b, '\n')+1:]
	}
	return b
}

// serve answers every request with body as the Lua exporter does (uhttpd's
// CGI header "Content-Type: text/plain; version=0.0.4") and records the
// Accept header it was asked with.
func serve(t *testing.T, contentType string, body []byte) (url string, accept *string) {
	t.Helper()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Accept")
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		} else {
			w.Header()["Content-Type"] = nil // no sniffing: send none
		}
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics", &got
}

// TestScrapeRecordings serves real and assembled OpenWrt expositions and
// checks every typed value against the file.
func TestScrapeRecordings(t *testing.T) {
	tests := []struct {
		file string
		want *Snapshot
	}{
		{
			// OpenWrt 22.03.2, x86-64 VM, TP-Link TL-WN722N (ath9k_htc) as AP,
			// collectors wifi and wifi_stations; noise 0 = unknown.
			file: "openwrt-22.03-x86-wifi-wifi_stations.txt",
			want: &Snapshot{
				Radios: []Radio{{
					IfName: "wlan0", Device: "radio0", SSID: "OpenWrt", BSSID: "18:d6:c7:0b:cf:e3",
					Mode: "Master", Country: "CN", Channel: 1, FrequencyMHz: 2412,
					SignalDBm: f64(-42), BitrateKbps: f64(72200), Stations: in(2),
				}},
				Stations: []Station{
					{
						IfName: "wlan0", MAC: "4e:c1:16:8c:ac:01", SignalDBm: f64(-39),
						TxRateKbps: f64(72200), RxRateKbps: f64(6000),
						TxPackets: u64(103446), RxPackets: u64(187999), InactiveMs: u64(4150),
					},
					{
						IfName: "wlan0", MAC: "5c:c5:d4:04:5e:a7", SignalDBm: f64(-46),
						TxRateKbps: f64(72200), RxRateKbps: f64(6000),
						TxPackets: u64(1022), RxPackets: u64(1177), InactiveMs: u64(890),
					},
				},
				Collectors: Collectors{Wifi: true, WifiStations: true},
			},
		},
		{
			// Assembled from the collectors' sources (OpenWrt 23.05 and later):
			// two radios, hostapd_stations, wifi and wifi_stations together.
			file: "openwrt-hostapd-assembled.txt",
			want: &Snapshot{
				Radios: []Radio{
					{
						IfName: "phy0-ap0", Device: "radio0", SSID: "HomeNet", BSSID: "02:c0:ff:ee:00:01",
						Mode: "Master", Country: "DE", Encryption: "sae-mixed", Channel: 6, FrequencyMHz: 2437,
						NoiseDBm: f64(-95), SignalDBm: f64(-77), BitrateKbps: f64(65000), Stations: in(0),
					},
					{
						IfName: "phy1-ap0", Device: "radio1", SSID: "HomeNet", BSSID: "02:c0:ff:ee:01:01",
						Mode: "Master", Country: "DE", Encryption: "sae-mixed", Channel: 36, FrequencyMHz: 5180,
						NoiseDBm: f64(-92), SignalDBm: f64(-58), BitrateKbps: f64(1200900), Stations: in(2),
					},
				},
				Stations: []Station{
					{
						// Only hostapd_stations saw this one (iwinfo counted 0 on
						// phy0-ap0): every value is hostapd's.
						IfName: "phy0-ap0", MAC: "02:5e:10:aa:00:03", SignalDBm: f64(-77), NoiseDBm: f64(-95),
						RxBytes: u64(9210442), TxBytes: u64(7721903), RxPackets: u64(88412), TxPackets: u64(51770),
						InactiveMs: u64(11520), ConnectedSeconds: u64(86011),
						Authenticated: bl(true), Associated: bl(true),
						HT: bl(true), VHT: bl(false), HE: bl(false), WMM: bl(true), MFP: bl(false),
					},
					{
						// Both collectors: wifi_stations' values win, hostapd adds
						// connected time and flags.
						IfName: "phy1-ap0", MAC: "02:5e:10:aa:00:01", SignalDBm: f64(-53), NoiseDBm: f64(-92),
						RxRateKbps: f64(864800), TxRateKbps: f64(1200900), ExpectedThroughputKbps: f64(583593),
						RxBytes: u64(61877933), TxBytes: u64(1207760012), RxPackets: u64(418231), TxPackets: u64(903120),
						InactiveMs: u64(40), ConnectedSeconds: u64(5412),
						Authenticated: bl(true), Associated: bl(true),
						HT: bl(true), VHT: bl(true), HE: bl(true), WMM: bl(true), MFP: bl(true),
					},
					{
						IfName: "phy1-ap0", MAC: "02:5e:10:aa:00:02", SignalDBm: f64(-70), NoiseDBm: f64(-92),
						TxRateKbps: f64(175500),
						RxBytes:    u64(2377186), TxBytes: u64(28019733), RxPackets: u64(20591), TxPackets: u64(31877),
						InactiveMs: u64(2810), ConnectedSeconds: u64(733),
						Authenticated: bl(true), Associated: bl(true),
						HT: bl(true), VHT: bl(true), HE: bl(false), WMM: bl(true), MFP: bl(false),
					},
				},
				Collectors: Collectors{Wifi: true, WifiStations: true, HostapdStations: true},
			},
		},
	}
	tests = append(tests, struct {
		file string
		want *Snapshot
	}{
		// Assembled from the dawn collector's source: the utilisation DAWN
		// reports, matched to the wifi collector's interfaces by BSSID.
		file: "openwrt-dawn-assembled.txt",
		want: &Snapshot{
			Radios: []Radio{
				{
					IfName: "phy0-ap0", Device: "radio0", SSID: "HomeNet", BSSID: "02:c0:ff:ee:00:01",
					Mode: "Master", Country: "DE", Channel: 6, FrequencyMHz: 2437,
					NoiseDBm: f64(-95), SignalDBm: f64(-77), BitrateKbps: f64(65000), UtilizationPct: f64(59.607843137255),
				},
				{
					IfName: "phy1-ap0", Device: "radio1", SSID: "HomeNet", BSSID: "02:c0:ff:ee:01:01",
					Mode: "Master", Country: "DE", Channel: 36, FrequencyMHz: 5180,
					NoiseDBm: f64(-92), SignalDBm: f64(-58), BitrateKbps: f64(1200900), UtilizationPct: f64(23.529411764706),
				},
			},
			Collectors: Collectors{Wifi: true, Dawn: true},
		},
	})
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			url, accept := serve(t, "text/plain; version=0.0.4", recording(t, tt.file))
			got, err := Scrape(context.Background(), nil, url)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Scrape mismatch (-want +got):\n%s", diff)
			}
			if *accept != "text/plain; version=0.0.4" {
				t.Errorf("Accept = %q, want the text format", *accept)
			}
		})
	}
}

// TestStationsWithTheirRadio reads what a poller reads per station — signal,
// SNR with its radio's noise, rate, bytes, the BSSID of its interface —
// table-driven over the assembled exposition's stations.
func TestStationsWithTheirRadio(t *testing.T) {
	s, err := Parse(bytes.NewReader(recording(t, "openwrt-hostapd-assembled.txt")))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		mac        string
		bssid      string
		signal     float64
		snr        float64
		txKbps     *float64
		rxBytes    uint64
		inactiveMs uint64
	}{
		{"02:5e:10:aa:00:01", "02:c0:ff:ee:01:01", -53, 39, f64(1200900), 61877933, 40},
		{"02:5e:10:aa:00:02", "02:c0:ff:ee:01:01", -70, 22, f64(175500), 2377186, 2810},
		{"02:5e:10:aa:00:03", "02:c0:ff:ee:00:01", -77, 18, nil, 9210442, 11520},
	}
	for _, tt := range tests {
		t.Run(tt.mac, func(t *testing.T) {
			var st *Station
			for i := range s.Stations {
				if s.Stations[i].MAC == tt.mac {
					st = &s.Stations[i]
				}
			}
			if st == nil {
				t.Fatalf("no station %s", tt.mac)
			}
			r, ok := s.Radio(st.IfName)
			if !ok {
				t.Fatalf("no radio %s", st.IfName)
			}
			if r.BSSID != tt.bssid {
				t.Errorf("BSSID = %q, want %q", r.BSSID, tt.bssid)
			}
			if *st.SignalDBm != tt.signal || *st.SignalDBm-*st.NoiseDBm != tt.snr {
				t.Errorf("signal %v noise %v, want signal %v SNR %v", *st.SignalDBm, *st.NoiseDBm, tt.signal, tt.snr)
			}
			if diff := cmp.Diff(tt.txKbps, st.TxRateKbps); diff != "" {
				t.Errorf("TxRateKbps (-want +got):\n%s", diff)
			}
			if *st.RxBytes != tt.rxBytes || *st.InactiveMs != tt.inactiveMs {
				t.Errorf("RxBytes %d InactiveMs %d, want %d %d", *st.RxBytes, *st.InactiveMs, tt.rxBytes, tt.inactiveMs)
			}
		})
	}
	if _, ok := s.Radio("wlan9"); ok {
		t.Error("Radio(wlan9) found a radio that is not there")
	}
}

const sta = `ifname="wlan0",mac="02:00:00:00:00:01"`

// TestParse covers the rules one small exposition at a time: what is read,
// what is unknown, what is skipped and why.
func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Snapshot
	}{
		{
			name: "empty",
			in:   "",
			want: &Snapshot{},
		},
		{
			name: "collectors declared, no stations",
			in: "# TYPE wifi_stations gauge\n# TYPE wifi_station_signal_dbm gauge\n" +
				"# HELP hostapd_station_signal_dbm Signal.\n# TYPE wifi_network_noise_dbm gauge\n",
			want: &Snapshot{Collectors: Collectors{Wifi: true, WifiStations: true, HostapdStations: true}},
		},
		{
			name: "other series are ignored, even broken ones",
			in: "# TYPE node_load1 gauge\nnode_load1 0.5\nnode_info{x=\"unterminated} 1\n" +
				"# TYPE node_load1 gauge\nhostapd_ubus_station_rrm_caps_link_measurement{ifname=\"wlan0\",station=\"02:00:00:00:00:01\"} 1\n",
			want: &Snapshot{},
		},
		{
			name: "MAC normalised, upper case and dashes",
			in:   "wifi_station_signal_dbm{ifname=\"wlan0\",mac=\"02-AB-CD-EF-00-01\"} -61\n",
			want: &Snapshot{
				Radios:     []Radio{{IfName: "wlan0"}},
				Stations:   []Station{{IfName: "wlan0", MAC: "02:ab:cd:ef:00:01", SignalDBm: f64(-61)}},
				Collectors: Collectors{WifiStations: true},
			},
		},
		{
			name: "same station on two interfaces is two stations",
			in: "wifi_station_signal_dbm{ifname=\"wlan0\",mac=\"02:00:00:00:00:01\"} -61\n" +
				"wifi_station_signal_dbm{ifname=\"wlan1\",mac=\"02:00:00:00:00:01\"} -70\n",
			want: &Snapshot{
				Radios: []Radio{{IfName: "wlan0"}, {IfName: "wlan1"}},
				Stations: []Station{
					{IfName: "wlan0", MAC: "02:00:00:00:00:01", SignalDBm: f64(-61)},
					{IfName: "wlan1", MAC: "02:00:00:00:00:01", SignalDBm: f64(-70)},
				},
				Collectors: Collectors{WifiStations: true},
			},
		},
		{
			name: "collectors' unknown values are nil, not skipped",
			in: "wifi_station_signal_dbm{" + sta + "} 0\nwifi_station_receive_kilobits_per_second{" + sta + "} 0\n" +
				"wifi_network_noise_dbm{ifname=\"wlan0\",channel=\"0\",frequency=\"\",bssid=\"\"} 0\n" +
				"wifi_network_signal_dbm{ifname=\"wlan0\"} -255\nwifi_network_bitrate{ifname=\"wlan0\"} 0\n",
			want: &Snapshot{
				Radios:     []Radio{{IfName: "wlan0"}},
				Stations:   []Station{{IfName: "wlan0", MAC: "02:00:00:00:00:01"}},
				Collectors: Collectors{Wifi: true, WifiStations: true},
			},
		},
		{
			name: "a duplicate line does not overwrite the first",
			in:   "wifi_station_signal_dbm{" + sta + "} -50\nwifi_station_signal_dbm{" + sta + "} -80\n",
			want: &Snapshot{
				Radios:     []Radio{{IfName: "wlan0"}},
				Stations:   []Station{{IfName: "wlan0", MAC: "02:00:00:00:00:01", SignalDBm: f64(-50)}},
				Collectors: Collectors{WifiStations: true},
			},
		},
		{
			name: "OpenWrt 21.02 hostapd_stations names",
			in: `# TYPE hostapd_station_vht gauge
hostapd_station_vht{ifname="wlan1",station="02:00:00:00:00:09"} 1
hostapd_station_rx_packets{ifname="wlan1",station="02:00:00:00:00:09"} 100
hostapd_station_rx_bytes{ifname="wlan1",station="02:00:00:00:00:09"} 20000
hostapd_station_tx_packets{ifname="wlan1",station="02:00:00:00:00:09"} 300
hostapd_station_tx_bytes{ifname="wlan1",station="02:00:00:00:00:09"} 40000
hostapd_station_inactive_msec{ifname="wlan1",station="02:00:00:00:00:09"} 1250
hostapd_station_signal{ifname="wlan1",station="02:00:00:00:00:09"} -66
hostapd_station_connected_time{ifname="wlan1",station="02:00:00:00:00:09"} 77
hostapd_station_wpa{ifname="wlan1",station="02:00:00:00:00:09"} 2
`,
			want: &Snapshot{
				Radios: []Radio{{IfName: "wlan1"}},
				Stations: []Station{{
					IfName: "wlan1", MAC: "02:00:00:00:00:09", SignalDBm: f64(-66),
					RxPackets: u64(100), RxBytes: u64(20000), TxPackets: u64(300), TxBytes: u64(40000),
					InactiveMs: u64(1250), ConnectedSeconds: u64(77),
				}},
				Collectors: Collectors{HostapdStations: true},
			},
		},
		{
			name: "CRLF line ends, blanks, a timestamp, a HELP line",
			in: "# HELP wifi_station_signal_dbm Signal.\r\n\r\n  wifi_station_signal_dbm{" + sta + "} -44 1679196108000\r\n" +
				"wifi_stations{ifname=\"wlan0\"}\t1\r\n",
			want: &Snapshot{
				Radios:     []Radio{{IfName: "wlan0", Stations: in(1)}},
				Stations:   []Station{{IfName: "wlan0", MAC: "02:00:00:00:00:01", SignalDBm: f64(-44)}},
				Collectors: Collectors{WifiStations: true},
			},
		},
		{
			name: "escaped label values are read by the text parser",
			in:   `wifi_network_noise_dbm{ifname="wlan0",ssid="Joe's \"Net\" \\ 5G\n",bssid="02:00:00:00:AA:01"} -91` + "\n",
			want: &Snapshot{
				Radios:     []Radio{{IfName: "wlan0", SSID: "Joe's \"Net\" \\ 5G\n", BSSID: "02:00:00:00:aa:01", NoiseDBm: f64(-91)}},
				Collectors: Collectors{Wifi: true},
			},
		},
		{
			name: "skipped series are counted, the rest is read",
			in: strings.Join([]string{
				`wifi_station_signal_dbm{ifname="wlan0"} -50`,                               // NoMAC
				`wifi_station_signal_dbm{ifname="wlan0",mac="not-a-mac"} -50`,               // NoMAC
				`wifi_station_signal_dbm{ifname="wlan0",mac="02:00:00:00:00:01:02:03"} -50`, // NoMAC: EUI-64
				`wifi_station_signal_dbm{mac="02:00:00:00:00:01"} -50`,                      // NoInterface
				`wifi_station_signal_dbm{` + sta + `} NaN`,                                  // NaN
				`wifi_station_receive_bytes_total{` + sta + `} +Inf`,                        // NaN
				`wifi_station_signal_dbm{` + sta + `} 12`,                                   // OutOfRange: above 0 dBm
				`wifi_network_noise_dbm{ifname="wlan0"} -400`,                               // OutOfRange
				`wifi_station_transmit_packets_total{` + sta + `} -3`,                       // OutOfRange
				`wifi_station_receive_packets_total{` + sta + `} 2.5`,                       // OutOfRange
				`wifi_station_transmit_kilobits_per_second{` + sta + `} -1`,                 // OutOfRange
				`hostapd_station_flag_auth{vif="wlan0",station="02:00:00:00:00:01"} 2`,      // OutOfRange
				`wifi_stations{ifname="wlan0"} -1`,                                          // OutOfRange
				`wifi_network_noise_dbm{ifname="wlan0",ssid="Joe"s"} -90`,                   // Malformed: Lua does not escape
				"wifi_network_noise_dbm{ifname=\"wlan0\",ssid=\"caf\xe9\"} -90",             // Malformed: not UTF-8
				`wifi_station_signal_dbm{` + sta + `,` + sta + `} -50`,                      // Malformed: duplicate labels
				`wifi_station_signal_dbm{` + sta + `}`,                                      // Malformed: no value
				`wifi_station_inactive_milliseconds{` + sta + `} 120`,                       // read
				`hostapd_station_flag_wmm{vif="wlan0",station="02:00:00:00:00:01"} 1`,       // read
			}, "\n") + "\n",
			want: &Snapshot{
				Radios: []Radio{{IfName: "wlan0"}},
				Stations: []Station{{
					IfName: "wlan0", MAC: "02:00:00:00:00:01", InactiveMs: u64(120), WMM: bl(true),
				}},
				Collectors: Collectors{Wifi: true, WifiStations: true, HostapdStations: true},
				Skipped:    Skipped{NoMAC: 3, NoInterface: 1, NaN: 2, OutOfRange: 7, Malformed: 4},
			},
		},
		{
			name: "dawn's utilisation by BSSID: bad values skipped, unmatched BSSIDs unused",
			in: strings.Join([]string{
				`wifi_network_noise_dbm{ifname="wlan0",bssid="02:00:00:00:0a:01",mode="Master"} -90`,
				`wifi_network_noise_dbm{ifname="wlan1",bssid="02:00:00:00:0a:02",mode="Master"} -91`,
				`dawn_ap_channel_utilization_ratio{bssid="02:00:00:00:0A:01",ssid="x"} 0.5`,      // read (upper case matches)
				`dawn_ap_channel_utilization_ratio{bssid="02:00:00:00:0a:01",ssid="x"} 0.9`,      // a duplicate: the first kept
				`dawn_ap_channel_utilization_ratio{bssid="02:00:00:00:0a:02",ssid="x"} 1.5`,      // OutOfRange
				`dawn_ap_channel_utilization_ratio{bssid="02:00:00:00:0a:02",ssid="x"} NaN`,      // NaN
				`dawn_ap_channel_utilization_ratio{ssid="x"} 0.1`,                                // NoMAC
				`dawn_ap_channel_utilization_ratio{bssid="02:00:00:00:0f:ff",ssid="x"} 0.25`,     // no such interface
				`dawn_station_signal_dbm{mac="02:00:00:00:00:01",bssid="02:00:00:00:0a:01"} -60`, // not read
			}, "\n") + "\n",
			want: &Snapshot{
				Radios: []Radio{
					{IfName: "wlan0", BSSID: "02:00:00:00:0a:01", Mode: "Master", NoiseDBm: f64(-90), UtilizationPct: f64(50)},
					{IfName: "wlan1", BSSID: "02:00:00:00:0a:02", Mode: "Master", NoiseDBm: f64(-91)},
				},
				Collectors: Collectors{Wifi: true, Dawn: true},
				Skipped:    Skipped{NoMAC: 1, NaN: 1, OutOfRange: 1},
			},
		},
		{
			name: "an overlong Wi-Fi line is Malformed, an overlong other line is ignored",
			in: "node_x{a=\"" + strings.Repeat("x", MaxLineBytes) + "\"} 1\n" +
				"wifi_network_noise_dbm{ifname=\"wlan0\",ssid=\"" + strings.Repeat("x", MaxLineBytes) + "\"} -90\n" +
				"wifi_station_signal_dbm{" + sta + "} -40",
			want: &Snapshot{
				Radios:     []Radio{{IfName: "wlan0"}},
				Stations:   []Station{{IfName: "wlan0", MAC: "02:00:00:00:00:01", SignalDBm: f64(-40)}},
				Collectors: Collectors{Wifi: true, WifiStations: true},
				Skipped:    Skipped{Malformed: 1},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseCaps sends more stations and interfaces than are kept: memory
// stays bounded and the excess is counted.
func TestParseCaps(t *testing.T) {
	var b strings.Builder
	const extraStations = 10
	for i := range MaxStations + extraStations {
		fmt.Fprintf(&b, "wifi_station_signal_dbm{ifname=\"wlan0\",mac=\"02:00:00:%02x:%02x:%02x\"} -50\n", i>>16&0xff, i>>8&0xff, i&0xff)
	}
	const extraRadios = 5
	for i := range MaxRadios + extraRadios {
		fmt.Fprintf(&b, "wifi_stations{ifname=\"wlan%d\"} 0\n", i)
	}
	s, err := Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Stations) != MaxStations || len(s.Radios) != MaxRadios {
		t.Errorf("kept %d stations and %d radios, want %d and %d", len(s.Stations), len(s.Radios), MaxStations, MaxRadios)
	}
	// The station lines' wlan0 is also the first wifi_stations line's, so
	// exactly extraRadios interfaces do not fit.
	if want := extraStations + extraRadios; s.Skipped.OverLimit != want {
		t.Errorf("OverLimit = %d, want %d", s.Skipped.OverLimit, want)
	}
}

// TestParseSizeCap: an exposition of exactly MaxBodyBytes is read, one byte
// more is ErrTooLarge.
func TestParseSizeCap(t *testing.T) {
	line := "# padding: a comment line the parser reads and ignores ..........\n"
	filler := func(n int) io.Reader {
		return io.LimitReader(strings.NewReader(strings.Repeat(line, n/len(line)+1)), int64(n))
	}
	if _, err := Parse(filler(MaxBodyBytes)); err != nil {
		t.Errorf("MaxBodyBytes: %v", err)
	}
	if _, err := Parse(filler(MaxBodyBytes + 1)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxBodyBytes+1: err = %v, want ErrTooLarge", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestParseReadError(t *testing.T) {
	if _, err := Parse(io.MultiReader(strings.NewReader("wifi_stations{ifname=\"w\"} 1\n"), failingReader{})); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("err = %v, want the read error", err)
	}
}

// TestScrapeRefuses covers what Scrape turns away.
func TestScrapeRefuses(t *testing.T) {
	body := []byte("wifi_stations{ifname=\"wlan0\"} 1\n")
	tests := []struct {
		name        string
		status      int
		contentType string
		body        []byte
		check       func(error) bool
	}{
		{"OpenMetrics", 200, "application/openmetrics-text; version=1.0.0; charset=utf-8", body, isErr(ErrNotText)},
		{"protobuf", 200, "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited", body, isErr(ErrNotText)},
		{"HTML login page", 200, "text/html; charset=utf-8", []byte("<html></html>"), isErr(ErrNotText)},
		{"malformed content type", 200, "text/plain; ;;=", body, isErr(ErrNotText)},
		{"not found", 404, "text/plain", []byte("ERROR: File Not Found."), func(err error) bool {
			var se *StatusError
			return errors.As(err, &se) && se.StatusCode == 404
		}},
		{"too large", 200, "text/plain; version=0.0.4", bytes.Repeat([]byte("# x\n"), MaxBodyBytes/4+1), isErr(ErrTooLarge)},
		{"no content type is read as text", 200, "", body, func(err error) bool { return err == nil }},
		{"text/plain with charset", 200, "text/plain; version=0.0.4; charset=utf-8", body, func(err error) bool { return err == nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentType != "" {
					w.Header().Set("Content-Type", tt.contentType)
				} else {
					w.Header()["Content-Type"] = nil
				}
				w.WriteHeader(tt.status)
				w.Write(tt.body)
			}))
			defer srv.Close()
			_, err := Scrape(context.Background(), srv.Client(), srv.URL)
			if !tt.check(err) {
				t.Errorf("err = %v", err)
			}
		})
	}
}

func isErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func TestScrapeContextAndURL(t *testing.T) {
	url, _ := serve(t, "text/plain", []byte("wifi_stations{ifname=\"wlan0\"} 1\n"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Scrape(ctx, nil, url); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := Scrape(context.Background(), nil, "http://[::1"); err == nil {
		t.Error("bad URL: no error")
	}
}
