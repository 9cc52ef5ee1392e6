// Command childanswer measures what a hostile cluster child costs its
// parent: it runs a child of its own that logs anyone in and answers every
// call with -size bytes of JSON, starts a real `wnms serve` (-wnms, a built
// binary) as the parent of that child, has -callers callers make a call
// forwarded to the child at once, and prints each caller's answer and the
// parent's peak resident memory (VmHWM).
//
//	CGO_ENABLED=0 go build -o /tmp/wnms ./cmd/wnms
//	go run ./bench/childanswer -wnms /tmp/wnms
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/bench/internal/benchserver"
)

var (
	wnmsBin = flag.String("wnms", "", "the wnms binary to run as the parent")
	size    = flag.Int64("size", 1<<30, "bytes the child answers")
	callers = flag.Int("callers", 3, "concurrent callers")
)

func main() {
	flag.Parse()
	if *wnmsBin == "" {
		log.Fatal("-wnms is required")
	}
	// The hostile child.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /new/webservice/login/key/", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: "hostile"})
		io.WriteString(w, `{}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		chunk := bytes.Repeat([]byte(" "), 1<<20)
		io.WriteString(w, "[")
		for n := int64(0); n < *size; n += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		io.WriteString(w, "]")
	})
	go http.Serve(ln, mux)

	dir, err := os.MkdirTemp("", "childanswer")
	check(err)
	defer os.RemoveAll(dir)
	cfg, _ := json.Marshal(map[string]any{"children": []any{map[string]any{"childId": 2, "name": "Hostile",
		"url": "http://" + ln.Addr().String(), "keyId": "k", "keyValue": "v", "timeoutSeconds": 300}}})
	check(os.WriteFile(filepath.Join(dir, "cluster.json"), cfg, 0o600))
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	addr := pl.Addr().String()
	pl.Close()
	cmd := exec.Command(*wnmsBin, "serve", "--data", filepath.Join(dir, "data"), "--listen", addr,
		"--analytics-listen", "127.0.0.1:0", "--snmp-agent-listen", "off", "--metrics-listen", "off", "--cluster-config", filepath.Join(dir, "cluster.json"),
		"--log-level", "warn")
	cmd.Env = append(os.Environ(), "WNMS_BOOTSTRAP_KEY_ID=bench", "WNMS_BOOTSTRAP_KEY_VALUE=bench-value-0123456789")
	check(cmd.Start())
	defer cmd.Process.Kill()
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if r, err := http.Get(base + "/readyz"); err == nil && r.StatusCode == 200 {
			r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			log.Fatal("the parent did not start")
		}
	}
	body := `{"type":"apikeycredentials","keyId":"bench","keyValue":"bench-value-0123456789"}`
	r, err := http.Post(base+"/new/webservice/login/key/bench/3600", "application/json", strings.NewReader(body))
	check(err)
	r.Body.Close()
	var cookie string
	for _, c := range r.Cookies() {
		if c.Name == "JSESSIONID" {
			cookie = c.Value
		}
	}
	fmt.Printf("parent RSS before: %s; the child answers %d MiB\n", benchserver.ProcStatus(cmd.Process.Pid, "VmRSS"), *size>>20)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *callers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("GET", base+"/new/webservice/V2/locations/tree?nodeid=2", nil)
			req.Header.Set("Cookie", "JSESSIONID="+cookie)
			t := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				fmt.Printf("caller %d: %v\n", i, err)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("caller %d: %d in %s: %.160s\n", i, resp.StatusCode, time.Since(t).Round(time.Millisecond), b)
		}()
	}
	wg.Wait()
	fmt.Printf("%d callers in %s; parent peak RSS (VmHWM) %s\n", *callers, time.Since(start).Round(time.Millisecond), benchserver.ProcStatus(cmd.Process.Pid, "VmHWM"))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
