// Command bare is the baseline of the wnms benchmark: a plain net/http
// server that answers every request with the same 1 KiB JSON body, so
// bench/users-current.sh can compare wnms against what net/http alone does
// on this machine.
package main

import (
	"flag"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// bodySize is the size of every answer, in bytes.
const bodySize = 1024

// body is a JSON object of exactly bodySize bytes.
var body = func() []byte {
	const head, tail = `{"padding":"`, `"}`
	b := []byte(head + strings.Repeat("x", bodySize-len(head)-len(tail)) + tail)
	if len(b) != bodySize {
		panic("body size")
	}
	return b
}()

func main() {
	addr := flag.String("listen", "127.0.0.1:8090", "address to listen on")
	flag.Parse()
	length := strconv.Itoa(len(body))
	srv := &http.Server{
		Addr: *addr,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Content-Length", length)
			w.Write(body)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
	log.Printf("bare: %d-byte JSON on http://%s/", len(body), *addr)
	log.Fatal(srv.ListenAndServe())
}
