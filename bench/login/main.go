// Command login measures API-key login latency against a running wnms:
// it makes -n sequential key logins over one keep-alive connection and
// prints the 50th, 90th and 99th percentile in milliseconds. Every login
// opens a real session in the store, as a client's would.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"sort"
	"strings"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080/new/webservice", "wnms base URL (up to and including /new/webservice)")
	keyID := flag.String("key-id", os.Getenv("WNMS_BENCH_KEY_ID"), "API key id (or WNMS_BENCH_KEY_ID)")
	keyValue := flag.String("key-value", os.Getenv("WNMS_BENCH_KEY_VALUE"), "API key value (or WNMS_BENCH_KEY_VALUE)")
	n := flag.Int("n", 500, "number of logins")
	warmup := flag.Int("warmup", 10, "logins made first and not counted")
	flag.Parse()
	if *keyID == "" || *keyValue == "" || *n < 1 {
		fmt.Fprintln(os.Stderr, "login: -key-id and -key-value are required, -n at least 1")
		os.Exit(2)
	}
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": *keyID, "keyValue": *keyValue})
	url := strings.TrimRight(*base, "/") + "/login/key/bench-login/3600"
	client := &http.Client{
		Transport: &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true},
		Timeout:   30 * time.Second,
	}
	var conns, reused int
	trace := &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) {
		conns++
		if ci.Reused {
			reused++
		}
	}}
	login := func() (time.Duration, error) {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("login answered %s", resp.Status)
		}
		return d, nil
	}
	for i := 0; i < *warmup; i++ {
		if _, err := login(); err != nil {
			fmt.Fprintln(os.Stderr, "login:", err)
			os.Exit(1)
		}
	}
	conns, reused = 0, 0
	ds := make([]time.Duration, 0, *n)
	start := time.Now()
	for i := 0; i < *n; i++ {
		d, err := login()
		if err != nil {
			fmt.Fprintln(os.Stderr, "login:", err)
			os.Exit(1)
		}
		ds = append(ds, d)
	}
	total := time.Since(start)
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	pct := func(p float64) float64 {
		i := int(p*float64(len(ds))+0.5) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(ds) {
			i = len(ds) - 1
		}
		return float64(ds[i].Microseconds()) / 1000
	}
	fmt.Printf("key logins: %d in %.2fs; %d of %d requests reused the kept-alive connection, %d opened a new one\n",
		len(ds), total.Seconds(), reused, conns, conns-reused)
	fmt.Printf("login latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n", pct(0.50), pct(0.90), pct(0.99),
		float64(ds[len(ds)-1].Microseconds())/1000)
}
