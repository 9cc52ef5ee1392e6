package httpkit

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func testErrorBody(status int, code, message string) []byte {
	b, _ := json.Marshal(map[string]any{"status": status, "errors": []map[string]string{{"errorCode": code, "message": message, "moreInfo": ""}}})
	return b
}

// serveKit serves h on a loopback listener wrapped by NewListener.
func serveKit(t *testing.T, limits ConnLimits, h http.Handler) (*Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kl := NewListener(ln, limits, testErrorBody)
	srv := &http.Server{Handler: h, MaxHeaderBytes: 4 << 10, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(kl)
	t.Cleanup(func() { srv.Close() })
	return kl, ln.Addr().String()
}

// exchange sends raw bytes from the given local address (nil: any) and
// reads one response.
func exchange(t *testing.T, from net.IP, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != nil {
		d.LocalAddr = &net.TCPAddr{IP: from}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func ok(w http.ResponseWriter, r *http.Request) { WriteJSON(w, 200, map[string]string{"status": "ok"}) }

// net/http's own answers to requests it cannot parse come in the
// listener's JSON envelope, not as text/plain.
func TestListenerJSONForNetHTTPErrors(t *testing.T) {
	_, addr := serveKit(t, ConnLimits{}, http.HandlerFunc(ok))
	for _, tc := range []struct {
		name   string
		raw    string
		status int
		code   string
	}{
		{"oversize headers", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n", 431, "PAYLOAD_TOO_LARGE"},
		{"malformed request line", "GARBAGE\r\n\r\n", 400, "INVALID_REQUEST_BODY"},
		{"malformed header", "GET / HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n", 400, "INVALID_REQUEST_BODY"},
		{"unsupported transfer encoding", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "INVALID_REQUEST_BODY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := exchange(t, nil, addr, tc.raw)
			var eb struct {
				Status int
				Errors []struct{ ErrorCode string }
			}
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &eb) != nil ||
				eb.Status != tc.status || len(eb.Errors) != 1 || eb.Errors[0].ErrorCode != tc.code {
				t.Errorf("got %d %s %q, want %d JSON %s", resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.status, tc.code)
			}
		})
	}
	// A handler's own answers pass untouched.
	resp, body := exchange(t, nil, addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != 200 || string(body) != `{"status":"ok"}` {
		t.Errorf("handler answer changed: %d %s", resp.StatusCode, body)
	}
}

// One address cannot hold more than its share of connections; other
// addresses are still served, and connections count again once closed.
func TestListenerLimits(t *testing.T) {
	kl, addr := serveKit(t, ConnLimits{PerAddr: 3, Total: 5}, http.HandlerFunc(ok))
	a, b := net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 2)
	var held []net.Conn
	hold := func(from net.IP) {
		c, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: from}}).Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n") // headers never finished
		held = append(held, c)
	}
	waitOpen := func(n int) {
		for deadline := time.Now().Add(5 * time.Second); kl.Open() != n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections open, want %d", kl.Open(), n)
			}
		}
	}
	for i := 0; i < 3; i++ {
		hold(a)
	}
	waitOpen(3)
	resp, body := exchange(t, a, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "RATE_LIMITED") {
		t.Errorf("the fourth connection of one address: %d %s", resp.StatusCode, body)
	}
	resp, _ = exchange(t, b, addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Errorf("another address was not served: %d", resp.StatusCode)
	}
	waitOpen(3) // that connection has closed on the server's side too
	hold(b)
	hold(b)
	waitOpen(5)
	resp, _ = exchange(t, net.IPv4(127, 0, 0, 3), addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 429 {
		t.Errorf("a connection over the total: %d", resp.StatusCode)
	}
	for _, c := range held {
		c.Close()
	}
	waitOpen(0)
	if resp, _ := exchange(t, a, addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); resp.StatusCode != 200 {
		t.Errorf("after the held connections closed: %d", resp.StatusCode)
	}
	if kl.Refused() != 2 {
		t.Errorf("refused %d, want 2", kl.Refused())
	}
}

// A body that trickles in slower than its deadline is cut off with 400; one
// that arrives in time is read.
func TestBodyDeadline(t *testing.T) {
	defer func(g time.Duration) { bodyGrace = g }(bodyGrace)
	bodyGrace = 300 * time.Millisecond
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		LimitBodyTime(w, r)
		if _, err := io.ReadAll(r.Body); err != nil {
			e, _, clientFault := Classify(err)
			if !clientFault {
				t.Errorf("a late body is not the client's fault: %v", err)
			}
			WriteJSON(w, Status(e.Code), map[string]string{"errorCode": e.Code})
			return
		}
		ok(w, r)
	})
	_, addr := serveKit(t, ConnLimits{}, h)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	for i := 0; i < 3; i++ { // a trickle, far slower than the deadline allows
		io.WriteString(c, "x")
		time.Sleep(200 * time.Millisecond)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "INVALID_REQUEST_BODY") {
		t.Errorf("trickled body: %d %s", resp.StatusCode, body)
	}
	resp, body = exchange(t, nil, addr, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
	if resp.StatusCode != 200 {
		t.Errorf("a prompt body: %d %s", resp.StatusCode, body)
	}

	// A chunked body gets the same deadline: a trickle of chunks is cut
	// off once the grace is over (it once had the deadline of the largest
	// body any call takes, about 17 minutes).
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	io.WriteString(c2, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
	for i := 0; i < 3; i++ {
		io.WriteString(c2, "1\r\nx\r\n")
		time.Sleep(200 * time.Millisecond)
	}
	c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err = http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "INVALID_REQUEST_BODY") {
		t.Errorf("trickled chunks: %d %s", resp.StatusCode, body)
	}
	resp, body = exchange(t, nil, addr, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Errorf("a prompt chunked body: %d %s", resp.StatusCode, body)
	}
}

// The deadline of a body of unknown length moves with what arrives: a
// second more for each 64 KiB.
func TestPacedBodyDeadline(t *testing.T) {
	if got, want := BodyDeadline(0, MaxBody), bodyGrace; got != want {
		t.Errorf("nothing received: %s, want %s", got, want)
	}
	if got, want := BodyDeadline(3<<16, MaxBody), bodyGrace+3*time.Second; got != want {
		t.Errorf("192 KiB received: %s, want %s", got, want)
	}
}
