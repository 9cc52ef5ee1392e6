package main

import (
	"encoding/json"
	"expvar"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"strings"
)

// The debug listener (--debug-listen): Go's profiler (net/http/pprof) and
// the runtime's expvar variables, for an operator who must find out where
// a server spends its time or memory. It is off unless asked, never on the
// API listener, and only on a loopback address: it needs no login, and a
// profile shows what the server is doing.

// debugLoopback reports whether addr (host:port, as --debug-listen takes
// it) names a loopback address: 127.0.0.0/8, ::1 or localhost. An empty
// host (":6060", every interface) is not loopback.
func debugLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// debugListenProblem says what is wrong with a --debug-listen value (off,
// or host:port on loopback), or "" when nothing is.
func debugListenProblem(v string) string {
	switch {
	case v == "off":
		return ""
	case !listenAddr(v):
		return "must be off or host:port on loopback (127.0.0.1:6060)"
	case !debugLoopback(v):
		return "must be a loopback address (127.0.0.1, ::1 or localhost): the profiler needs no login"
	}
	return ""
}

// debugHandler serves the profiler under /debug/pprof/ and the expvar
// variables at /debug/vars. The command line is left out of both: it may
// carry a bootstrap key or a database password.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index) // the index and every named profile (heap, allocs, goroutine…)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("GET /debug/pprof/cmdline", func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "the command line is not shown: it may hold secrets", http.StatusNotFound)
	})
	mux.HandleFunc("GET /debug/vars", func(w http.ResponseWriter, _ *http.Request) {
		vars := map[string]json.RawMessage{}
		expvar.Do(func(kv expvar.KeyValue) {
			if kv.Key != "cmdline" {
				vars[kv.Key] = json.RawMessage(kv.Value.String())
			}
		})
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(vars)
	})
	return mux
}
