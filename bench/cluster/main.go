// Command cluster measures what the parent of a wnms cluster adds:
//
//  1. forwarding: GET users/current on a real child (an in-process wnms
//     API over its own SQLite), directly and through the parent with
//     nodeid, one request at a time;
//  2. fan-out: the location tree in a getClusterChildrenData session over
//     -children in-process fake children that answer a small tree after
//     a delay (child i waits i × -step), against the slowest child's delay.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/wnms/wnms/bench/internal/stats"

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/cluster"
	"github.com/wnms/wnms/internal/store"
)

var (
	nChildren = flag.Int("children", 10, "fake children for the fan-out")
	step      = flag.Duration("step", time.Millisecond, "fake child i answers after i × step")
	n         = flag.Int("requests", 2000, "requests of each kind")
)

func main() {
	flag.Parse()
	ctx := context.Background()
	open := func() *benchserver.Server {
		dir, err := os.MkdirTemp("", "wnms-cluster-bench-")
		check(err)
		st, err := store.Open(ctx, store.Config{DataDir: dir, Serving: true})
		check(err)
		s, err := benchserver.Start(ctx, st)
		check(err)
		return s
	}
	child := open()
	parent := open()

	// The real child gets a cluster parent's key for the parent; the fake
	// ones accept any.
	childKey, childValue, err := child.ParentKey(ctx)
	check(err)
	cfg := &cluster.Config{Children: []cluster.ChildConfig{{ChildID: 1, Name: "real", URL: strings.TrimSuffix(child.Base, "/new/webservice"),
		KeyID: childKey, KeyValue: childValue}}}
	for i := 1; i <= *nChildren; i++ {
		url := fakeChild(time.Duration(i) * *step)
		cfg.Children = append(cfg.Children, cluster.ChildConfig{ChildID: int64(100 + i), Name: fmt.Sprintf("fake %d", i), URL: url, KeyID: "k", KeyValue: "v"})
	}
	cl := cluster.New(cfg, parent.Log)
	parent.API.Cluster = cl
	parent.API.Router.Intercept = cl.Intercept
	go cl.Run(ctx)

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	childSession, err := child.Session(ctx, client)
	check(err)
	parentSession, err := parent.Session(ctx, client)
	check(err)
	direct := timeGets(client, child.Base+"/V5/users/current", childSession)
	forwarded := timeGets(client, parent.Base+"/V5/users/current?nodeid=1", parentSession)
	fmt.Printf("users/current on the child directly: p50 %s p99 %s\n", stats.MS(stats.Pct(direct, 50)), stats.MS(stats.Pct(direct, 99)))
	fmt.Printf("the same through the parent (nodeid=1): p50 %s p99 %s; added p50 %s\n",
		stats.MS(stats.Pct(forwarded, 50)), stats.MS(stats.Pct(forwarded, 99)), stats.MS(stats.Pct(forwarded, 50)-stats.Pct(direct, 50)))

	// Fan-out: drop the real child so that only the fakes answer.
	cl.Reload(ctx, &cluster.Config{Children: cfg.Children[1:]})
	fan, err := parent.SessionWith(ctx, client, "?getClusterChildrenData=true")
	check(err)
	tree := timeGets(client, parent.Base+"/V2/locations/tree", fan)
	slowest := time.Duration(*nChildren) * *step
	fmt.Printf("location tree fanned out over %d children (slowest answers after %s): p50 %s p99 %s; over the slowest p50 %s\n",
		*nChildren, slowest, stats.MS(stats.Pct(tree, 50)), stats.MS(stats.Pct(tree, 99)), stats.MS(stats.Pct(tree, 50)-slowest))
}

// fakeChild serves a child's login, keep-alive and a small location tree
// after delay, and returns its URL.
func fakeChild(delay time.Duration) string {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /new/webservice/login/key/", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: "fake"})
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"loginName":"admin"}`)
	})
	mux.HandleFunc("GET /new/webservice/V5/login/keepsessionalive", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{}`)
	})
	tree, _ := json.Marshal(map[string]any{
		"rootLocationId": map[string]any{"type": "locallocationid", "id": 0},
		"locations": map[string]any{
			`{"type":"locallocationid","id":0}`: map[string]any{"type": "folderlocation", "id": map[string]any{"type": "locallocationid", "id": 0},
				"parentId": nil, "name": "Root", "children": []any{map[string]any{"type": "locallocationid", "id": 1}}},
			`{"type":"locallocationid","id":1}`: map[string]any{"type": "floorlocation", "id": map[string]any{"type": "locallocationid", "id": 1},
				"parentId": map[string]any{"type": "locallocationid", "id": 0}, "name": "Floor 1"},
		},
	})
	mux.HandleFunc("GET /new/webservice/V2/locations/tree", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		w.Write(tree)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	go http.Serve(ln, mux)
	return "http://" + ln.Addr().String()
}

func timeGets(c *http.Client, url, session string) []time.Duration {
	out := make([]time.Duration, 0, *n)
	for i := 0; i < *n; i++ {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Cookie", "JSESSIONID="+session)
		t := time.Now()
		resp, err := c.Do(req)
		check(err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			check(fmt.Errorf("GET %s: %s", url, resp.Status))
		}
		out = append(out, time.Since(t))
	}
	return out
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster bench:", err)
		os.Exit(1)
	}
}
