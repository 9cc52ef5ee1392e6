package syslog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// received is what a test Receiver handed on.
type received struct {
	src netip.Addr
	m   Message
}

// listen binds UDP and TCP on one loopback port, as the caller of Serve
// does for --syslog-listen.
func listen(t *testing.T) (net.PacketConn, net.Listener) {
	t.Helper()
	return listenOn(t, "127.0.0.1")
}

// listenOn is listen on another address (host as in host:port): a
// client that sends to ::1 sends from it, so tests have senders of two
// addresses.
func listenOn(t *testing.T, host string) (net.PacketConn, net.Listener) {
	t.Helper()
	for range 20 {
		ln, err := net.Listen("tcp", host+":0")
		if err != nil {
			t.Fatal(err)
		}
		pc, err := net.ListenPacket("udp", ln.Addr().String())
		if err == nil {
			return pc, ln
		}
		ln.Close()
	}
	t.Fatal("no loopback port free for both UDP and TCP")
	return nil, nil
}

// startReceiver serves r on a fresh port until the test ends, and returns
// the address and the channel of what it handled.
func startReceiver(t *testing.T, r *Receiver) (string, <-chan received) {
	t.Helper()
	ch := make(chan received, 1000)
	r.Handle = func(_ context.Context, src netip.Addr, m Message) { ch <- received{src, m} }
	return serveOn(t, r, "127.0.0.1"), ch
}

// serveOn serves r, its Handle set, on a fresh port of host until the
// test ends, and returns the address.
func serveOn(t *testing.T, r *Receiver, host string) string {
	t.Helper()
	pc, ln := listenOn(t, host)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, pc, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
		if n := r.Stats().OpenConns; n != 0 {
			t.Errorf("%d connections open after Serve returned", n)
		}
	})
	return ln.Addr().String()
}

// next waits for the next handled message.
func next(t *testing.T, ch <-chan received) received {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no message arrived")
		return received{}
	}
}

// waitFor waits until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func dial(t *testing.T, network, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s); err != nil {
		t.Fatal(err)
	}
}

func TestReceiverUDP(t *testing.T) {
	r := &Receiver{}
	addr, ch := startReceiver(t, r)
	c := dial(t, "udp", addr)

	write(t, c, "<30>Nov 25 03:39:26 ap hostapd: wlan0: STA aa:bb:cc:dd:ee:ff IEEE 802.11: associated (aid 1)\n")
	got := next(t, ch)
	if got.src != netip.MustParseAddr("127.0.0.1") || got.m.Program != "hostapd" || got.m.Host != "ap" ||
		got.m.Text != "wlan0: STA aa:bb:cc:dd:ee:ff IEEE 802.11: associated (aid 1)" {
		t.Errorf("got %+v", got)
	}
	// Oversize, garbage, then exactly the limit: only the last is handed on.
	write(t, c, "<13>x "+strings.Repeat("y", DefaultMaxMessage))
	write(t, c, "garbage")
	exact := "<13>t: " + strings.Repeat("z", DefaultMaxMessage-7)
	write(t, c, exact)
	if got := next(t, ch); len(got.m.Text) != DefaultMaxMessage-7 {
		t.Errorf("a datagram of exactly the limit: text of %d bytes", len(got.m.Text))
	}
	s := r.Stats()
	if s.Datagrams != 4 || s.Lines != 4 || s.Parsed != 2 || s.Dropped[DropOversize] != 1 || s.Dropped[DropNotSyslog] != 1 {
		t.Errorf("stats %+v", s)
	}
}

func TestReceiverTCPFramings(t *testing.T) {
	r := &Receiver{MaxMessage: 64}
	addr, ch := startReceiver(t, r)
	c := dial(t, "tcp", addr)
	msgs := []string{"<13>1 2026-11-25T03:39:26Z h dnsmasq-dhcp 7 - - a", "<13>dhcpd: b", "<13>hostapd: c"}
	write(t, c, fmt.Sprintf("%d %s", len(msgs[0]), msgs[0]))
	write(t, c, msgs[1]+"\n"+strings.Repeat("o", 100)+"\n")
	write(t, c, fmt.Sprintf("%d %s", 65, strings.Repeat("p", 65)))
	write(t, c, "garbage\n")
	write(t, c, msgs[2]+"\n")
	for _, want := range []string{"a", "b", "c"} {
		if got := next(t, ch); got.m.Text != want {
			t.Errorf("got %q, want %q", got.m.Text, want)
		}
	}
	s := r.Stats()
	if s.Lines != 6 || s.Parsed != 3 || s.Dropped[DropOversize] != 2 || s.Dropped[DropNotSyslog] != 1 || s.Connections != 1 {
		t.Errorf("stats %+v", s)
	}
	// A stream that cannot be framed is closed and counted.
	write(t, c, "12x <13>t: d\n")
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("read after bad framing: %v, want EOF", err)
	}
	waitFor(t, "the framing drop", func() bool { return r.Stats().Dropped[DropFraming] == 1 })
}

func TestReceiverConnectionLimitAndIdle(t *testing.T) {
	r := &Receiver{MaxConns: 3, IdleTimeout: 200 * time.Millisecond}
	addr, ch := startReceiver(t, r)
	var conns []net.Conn
	for i := range 3 {
		c := dial(t, "tcp", addr)
		write(t, c, fmt.Sprintf("<13>t: %d\n", i))
		next(t, ch)
		conns = append(conns, c)
	}
	// The fourth is closed at once.
	over := dial(t, "tcp", addr)
	over.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := over.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("connection over the limit: read %v, want EOF", err)
	}
	if s := r.Stats(); s.Dropped[DropConnLimit] != 1 || s.OpenConns != 3 {
		t.Errorf("stats %+v", s)
	}
	// Silent connections are closed after IdleTimeout, freeing their slots.
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("idle connection: read %v, want EOF", err)
		}
	}
	waitFor(t, "the idle connections to close", func() bool { return r.Stats().OpenConns == 0 })
	if n := r.Stats().IdleClosed; n != 3 {
		t.Errorf("%d connections counted closed for idleness, want 3", n)
	}
	c := dial(t, "tcp", addr)
	write(t, c, "<13>t: again\n")
	if got := next(t, ch); got.m.Text != "again" {
		t.Errorf("after the idle close: %q", got.m.Text)
	}
}

// One address that opens more connections than its share keeps only its
// share: another address still gets its lines in, and the hog's silent
// connections close after IdleTimeout, freeing its share again.
func TestReceiverConnectionsPerAddress(t *testing.T) {
	r := &Receiver{MaxConns: 8, MaxConnsPer: 3, IdleTimeout: 300 * time.Millisecond}
	addr, ch := startReceiver(t, r)
	from := func(local string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	closed := func(c net.Conn) bool {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.Read(make([]byte, 1))
		// EOF, or a reset when the line written was left unread.
		var ne net.Error
		return err != nil && !(errors.As(err, &ne) && ne.Timeout())
	}
	// The hog opens ten, as many as the whole limit and more; one line on
	// each tells which the receiver kept.
	var hog []net.Conn
	for i := range 10 {
		c := from("127.0.0.1")
		write(t, c, fmt.Sprintf("<13>t: hog %d\n", i))
		hog = append(hog, c)
	}
	for range 3 {
		next(t, ch)
	}
	waitFor(t, "the hog's refused connections", func() bool { return r.Stats().Dropped[DropConnPer] == 7 })
	if s := r.Stats(); s.OpenConns != 3 || s.Dropped[DropConnLimit] != 0 || s.ConnsRefused[DropConnPer] != 7 {
		t.Errorf("stats %+v", s)
	}
	// Another address still gets in.
	other := from("127.0.0.2")
	write(t, other, "<13>t: other\n")
	if got := next(t, ch); got.m.Text != "other" || got.src != netip.MustParseAddr("127.0.0.2") {
		t.Errorf("another address: %+v", got)
	}
	// The hog's kept connections go quiet and are closed, as the other's.
	n := 0
	for _, c := range hog {
		if closed(c) {
			n++
		}
	}
	if n != 10 || !closed(other) {
		t.Errorf("%d of the hog's 10 connections closed", n)
	}
	waitFor(t, "the idle connections to close", func() bool { return r.Stats().OpenConns == 0 })
	if s := r.Stats(); s.IdleClosed != 4 {
		t.Errorf("%d connections closed for idleness, want 4", s.IdleClosed)
	}
	c := from("127.0.0.1")
	write(t, c, "<13>t: again\n")
	if got := next(t, ch); got.m.Text != "again" {
		t.Errorf("after the idle close: %q", got.m.Text)
	}
}

// Many senders at once, each from its own address: every message arrives
// once.
func TestReceiverManySenders(t *testing.T) {
	r := &Receiver{}
	addr, ch := startReceiver(t, r)
	const senders, each = 20, 50
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(s+1))}}
			c, err := d.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			var b strings.Builder
			for i := range each {
				m := fmt.Sprintf("<13>t: %d-%d", s, i)
				if i%2 == 0 {
					fmt.Fprintf(&b, "%d %s", len(m), m)
				} else {
					b.WriteString(m + "\n")
				}
			}
			if _, err := io.WriteString(c, b.String()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for range senders * each {
		got := next(t, ch)
		if seen[got.m.Text] {
			t.Errorf("%q twice", got.m.Text)
		}
		seen[got.m.Text] = true
	}
	if s := r.Stats(); s.Parsed != senders*each || s.Connections != senders {
		t.Errorf("stats %+v", s)
	}
}

func TestReceiverAccept(t *testing.T) {
	r := &Receiver{Accept: func(netip.Addr) bool { return false }}
	addr, ch := startReceiver(t, r)
	u := dial(t, "udp", addr)
	write(t, u, "<13>t: x")
	c := dial(t, "tcp", addr)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("refused source: read %v, want EOF", err)
	}
	waitFor(t, "both drops", func() bool { return r.Stats().Dropped[DropSource] == 2 })
	select {
	case got := <-ch:
		t.Errorf("a refused source's message was handled: %+v", got)
	default:
	}
}

// A listener that fails ends Serve with its error, and the other with it.
func TestReceiverServeFails(t *testing.T) {
	pc, ln := listen(t)
	r := &Receiver{Handle: func(context.Context, netip.Addr, Message) {}}
	done := make(chan error, 1)
	go func() { done <- r.Serve(context.Background(), pc, ln) }()
	pc.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Serve returned nil after its UDP socket failed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after its UDP socket failed")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the TCP listener is still open")
	}
	if err := (&Receiver{}).Serve(context.Background(), nil, nil); err == nil {
		t.Error("Serve without a Handler: no error")
	}
}
