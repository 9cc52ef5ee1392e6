package promwifi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/wnms/wnms/internal/radius/radiustest"
)

const nodeExporter = "prometheus-node-exporter" // Debian's package and binary name

// aroundWifi is a textfile-collector file of what a real exposition carries
// besides Wi-Fi: a histogram, a summary, HELP text, and label values with an
// escaped quote, backslash and newline.
const aroundWifi = `# HELP wnms_test_latency_seconds A histogram the Wi-Fi parser must read past.
# TYPE wnms_test_latency_seconds histogram
wnms_test_latency_seconds_bucket{le="0.1"} 3
wnms_test_latency_seconds_bucket{le="1"} 4
wnms_test_latency_seconds_bucket{le="+Inf"} 5
wnms_test_latency_seconds_sum 2.7
wnms_test_latency_seconds_count 5
# HELP wnms_test_rpc_seconds A summary the Wi-Fi parser must read past.
# TYPE wnms_test_rpc_seconds summary
wnms_test_rpc_seconds{quantile="0.5"} 0.2
wnms_test_rpc_seconds{quantile="0.99"} 0.9
wnms_test_rpc_seconds_sum 3
wnms_test_rpc_seconds_count 9
# HELP wnms_test_info Label values with escapes.
# TYPE wnms_test_info gauge
wnms_test_info{note="say \"hi\" \\ then\nbye"} 1
`

// wifiSeries is the same Wi-Fi as an OpenWrt AP would write, put through the
// real exporter's textfile collector, which re-encodes it as Go's
// client_golang does (HELP lines, sorted labels, escaped values).
const wifiSeries = `# TYPE wifi_network_noise_dbm gauge
wifi_network_noise_dbm{ifname="phy1-ap0",device="radio1",ssid="Café \"Lobby\" \\ 5G",bssid="02:C0:FF:EE:01:01",channel="36",frequency="5180",mode="Master",country="DE"} -92
# TYPE wifi_stations gauge
wifi_stations{ifname="phy1-ap0"} 1
# TYPE wifi_station_signal_dbm gauge
wifi_station_signal_dbm{ifname="phy1-ap0",mac="02:5E:10:AA:00:01"} -53
# TYPE wifi_station_receive_kilobits_per_second gauge
wifi_station_receive_kilobits_per_second{ifname="phy1-ap0",mac="02:5E:10:AA:00:01"} 864800
# TYPE hostapd_station_connected_seconds_total counter
hostapd_station_connected_seconds_total{vif="phy1-ap0",station="02:5e:10:aa:00:01",ssid="Café \"Lobby\" \\ 5G",encryption="sae-mixed"} 5412
`

// TestDebianNodeExporter scrapes Debian's real prometheus-node-exporter: the
// whole exposition it serves (HELP and TYPE lines, Go runtime summaries,
// a histogram, escaped label values) parses, its non-Wi-Fi series are
// ignored, and Wi-Fi series it serves are read.
func TestDebianNodeExporter(t *testing.T) {
	radiustest.NeedTool(t, nodeExporter)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "around.prom"), aroundWifi)
	url := startNodeExporter(t, dir)

	t.Run("no Wi-Fi", func(t *testing.T) {
		body, ct := get(t, url, acceptHeader)
		for _, want := range []string{"# HELP go_gc_duration_seconds", "# TYPE go_gc_duration_seconds summary",
			`go_gc_duration_seconds{quantile="0.5"}`, "wnms_test_latency_seconds_bucket{le=\"+Inf\"} 5",
			`note="say \"hi\" \\ then\nbye"`, "node_load1 "} {
			if !strings.Contains(body, want) {
				t.Errorf("the exposition lacks %q, so this test does not cover it", want)
			}
		}
		if !strings.HasPrefix(ct, "text/plain") {
			t.Errorf("Content-Type %q for Accept %q", ct, acceptHeader)
		}
		s, err := Scrape(context.Background(), nil, url)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(&Snapshot{}, s); diff != "" {
			t.Errorf("non-Wi-Fi series leaked in (-want +got):\n%s", diff)
		}
	})

	t.Run("Wi-Fi through the textfile collector", func(t *testing.T) {
		// The textfile collector reads its directory on every scrape.
		writeFile(t, filepath.Join(dir, "wifi.prom"), wifiSeries)
		s, err := Scrape(context.Background(), nil, url)
		if err != nil {
			t.Fatal(err)
		}
		want := &Snapshot{
			Radios: []Radio{{
				IfName: "phy1-ap0", Device: "radio1", SSID: `Café "Lobby" \ 5G`, BSSID: "02:c0:ff:ee:01:01",
				Mode: "Master", Country: "DE", Encryption: "sae-mixed", Channel: 36, FrequencyMHz: 5180,
				NoiseDBm: f64(-92), Stations: in(1),
			}},
			Stations: []Station{{
				IfName: "phy1-ap0", MAC: "02:5e:10:aa:00:01", SignalDBm: f64(-53), NoiseDBm: f64(-92),
				RxRateKbps: f64(864800), ConnectedSeconds: u64(5412),
			}},
			Collectors: Collectors{Wifi: true, WifiStations: true, HostapdStations: true},
		}
		if diff := cmp.Diff(want, s); diff != "" {
			t.Errorf("Scrape mismatch (-want +got):\n%s", diff)
		}
	})
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	// Write then rename, so the exporter never reads half a file.
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url, accept string) (body, contentType string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), resp.Header.Get("Content-Type")
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startNodeExporter runs the exporter on a free loopback port with a few
// quick collectors and the textfile collector on dir, and returns its
// metrics URL once it answers. It tries another port if the one picked was
// taken in between.
func startNodeExporter(t *testing.T, dir string) string {
	t.Helper()
	var lastErr error
	for range 3 {
		port, err := freeTCPPort()
		if err != nil {
			t.Fatal(err)
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		var out syncBuffer
		cmd := exec.Command(nodeExporter,
			"--web.listen-address="+addr,
			"--collector.disable-defaults",
			"--collector.loadavg", "--collector.time", "--collector.netdev",
			"--collector.textfile", "--collector.textfile.directory="+dir,
			"--log.level=warn")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() {
			cmd.Wait()
			close(exited)
		}()
		url := "http://" + addr + "/metrics"
		if err := waitReady(url, exited); err != nil {
			cmd.Process.Kill()
			<-exited
			lastErr = fmt.Errorf("%v; its output:\n%s", err, out.String())
			continue
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
		})
		return url
	}
	t.Fatalf("%s did not start: %v", nodeExporter, lastErr)
	return ""
}

func freeTCPPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls url until it answers 200, the process exits, or 20 s pass.
func waitReady(url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(20 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		resp, err := client.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = errors.New(resp.Status)
		}
		select {
		case <-exited:
			return errors.New("exited before answering")
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not answering after 20 s: %v", err)
		}
	}
}
