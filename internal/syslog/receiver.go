package syslog

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/udpbuf"
)

// Defaults of a Receiver.
const (
	DefaultMaxMessage  = 8 << 10
	DefaultMaxConns    = 256
	DefaultMaxConnsPer = 16
	DefaultIdleTimeout = 5 * time.Minute
)

// Reasons a Receiver drops a message or a connection, as ReceiverStats
// counts them.
const (
	DropOversize  = "oversize"         // a datagram or frame longer than MaxMessage
	DropNotSyslog = "not_syslog"       // Parse refused it
	DropSource    = "source"           // from an address Accept refused
	DropConnLimit = "conn_limit"       // a connection over MaxConns, closed at once
	DropConnPer   = "conn_per_address" // a connection over MaxConnsPer from its address, closed at once
	DropFraming   = "framing"          // a TCP stream that could not be framed, closed
)

// Handler is called with each message a Receiver parsed, and the address
// it came from. It is called from several goroutines at once (the UDP
// reader and one per TCP connection), and a slow Handler slows that
// sender's intake, never memory.
type Handler func(ctx context.Context, source netip.Addr, m Message)

// Receiver receives syslog over UDP (a datagram is a message) and TCP
// (newline or octet-counting framing, RFC 6587), parses each message and
// hands it to Handle. Set its fields before Serve; it must not be copied
// after first use.
type Receiver struct {
	// Handle is given every message parsed (required).
	Handle Handler
	// Accept, if set, says whether a source may send: messages and
	// connections from other addresses are dropped (DropSource).
	Accept func(source netip.Addr) bool
	// MaxMessage bounds a message (DefaultMaxMessage if 0); longer ones
	// are dropped (DropOversize).
	MaxMessage int
	// MaxConns bounds the TCP connections open at once (DefaultMaxConns if
	// 0); a connection over it is closed at once (DropConnLimit).
	MaxConns int
	// MaxConnsPer bounds the TCP connections open at once from one
	// address (DefaultMaxConnsPer if 0), so one host cannot take every
	// slot; a connection over it is closed at once (DropConnPer). A syslog
	// daemon forwards on one connection.
	MaxConnsPer int
	// IdleTimeout closes a TCP connection silent that long
	// (DefaultIdleTimeout if 0), freeing its slot.
	IdleTimeout time.Duration
	// Location is the zone of RFC 3164 timestamps, which carry none
	// (nil: UTC).
	Location *time.Location
	// Now is the clock (time.Now if nil).
	Now func() time.Time

	datagrams, lines, parsed, conns, open, idle, connSource atomic.Uint64
	drops                                                   sync.Map // reason → *atomic.Uint64
}

// ReceiverStats are a Receiver's counters since it was made.
type ReceiverStats struct {
	Datagrams   uint64 // UDP datagrams read
	Connections uint64 // TCP connections accepted (including those closed at once)
	OpenConns   uint64 // TCP connections open now
	IdleClosed  uint64 // TCP connections closed after IdleTimeout of silence
	// ConnsRefused are the TCP connections closed at once, by reason
	// (DropSource, DropConnLimit, DropConnPer); Dropped counts them too.
	ConnsRefused map[string]uint64
	Lines        uint64            // messages received: datagrams and TCP frames
	Parsed       uint64            // messages parsed and handed to Handle
	Dropped      map[string]uint64 // by reason (Drop* constants)
}

// Stats returns the receiver's counters, safe to call at any time.
func (r *Receiver) Stats() ReceiverStats {
	s := ReceiverStats{Datagrams: r.datagrams.Load(), Connections: r.conns.Load(), OpenConns: r.open.Load(),
		IdleClosed: r.idle.Load(), Lines: r.lines.Load(), Parsed: r.parsed.Load(), Dropped: map[string]uint64{}}
	r.drops.Range(func(k, v any) bool {
		s.Dropped[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	s.ConnsRefused = map[string]uint64{DropSource: r.connSource.Load(), DropConnLimit: s.Dropped[DropConnLimit],
		DropConnPer: s.Dropped[DropConnPer]}
	return s
}

func (r *Receiver) drop(reason string, n uint64) {
	v, ok := r.drops.Load(reason)
	if !ok {
		v, _ = r.drops.LoadOrStore(reason, new(atomic.Uint64))
	}
	v.(*atomic.Uint64).Add(n)
}

func (r *Receiver) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Receiver) maxMessage() int {
	if r.MaxMessage > 0 {
		return r.MaxMessage
	}
	return DefaultMaxMessage
}

// Serve receives on pc (UDP) and ln (TCP), either of which may be nil,
// until ctx ends; then it closes both and every connection, waits for its
// goroutines, and returns nil. If pc or ln fails before, it stops the
// other the same way and returns that error.
func (r *Receiver) Serve(ctx context.Context, pc net.PacketConn, ln net.Listener) error {
	if r.Handle == nil {
		return errors.New("syslog: Receiver.Handle is nil")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var serve []func() error
	if pc != nil {
		serve = append(serve, func() error { return r.serveUDP(ctx, pc) })
	}
	if ln != nil {
		serve = append(serve, func() error { return r.serveTCP(ctx, ln) })
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(serve))
	for _, s := range serve {
		wg.Go(func() { errs <- s() })
	}
	wg.Go(func() {
		// Closing is what ends a blocked ReadFrom or Accept.
		<-ctx.Done()
		if pc != nil {
			pc.Close()
		}
		if ln != nil {
			ln.Close()
		}
	})
	var first error
	for range serve {
		if err := <-errs; err != nil && ctx.Err() == nil && first == nil {
			// One failed: stop the other too.
			first = err
			cancel()
		}
	}
	cancel()
	wg.Wait()
	return first
}

func (r *Receiver) serveUDP(ctx context.Context, pc net.PacketConn) error {
	udpbuf.Enlarge(pc) // many senders' bursts
	max := r.maxMessage()
	// One byte more than allowed tells an oversize datagram from one that
	// fits exactly.
	buf := make([]byte, max+1)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		r.datagrams.Add(1)
		src := addrOf(addr)
		if r.Accept != nil && !r.Accept(src) {
			r.drop(DropSource, 1)
			continue
		}
		r.lines.Add(1)
		if n > max {
			r.drop(DropOversize, 1)
			continue
		}
		r.handle(ctx, src, buf[:n])
	}
}

func (r *Receiver) handle(ctx context.Context, src netip.Addr, b []byte) {
	m, err := Parse(b, r.now(), r.Location)
	if err != nil {
		r.drop(DropNotSyslog, 1)
		return
	}
	r.parsed.Add(1)
	r.Handle(ctx, src, m)
}

func (r *Receiver) serveTCP(ctx context.Context, ln net.Listener) error {
	maxConns := r.MaxConns
	if maxConns <= 0 {
		maxConns = DefaultMaxConns
	}
	maxPer := r.MaxConnsPer
	if maxPer <= 0 {
		maxPer = DefaultMaxConnsPer
	}
	var (
		mu     sync.Mutex
		conns  = map[net.Conn]struct{}{}
		byAddr = map[netip.Addr]int{} // open connections by address: at most maxConns entries
		wg     sync.WaitGroup
	)
	defer func() {
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	}()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: back off as
				// net/http does, not spin.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				select {
				case <-time.After(delay):
				case <-ctx.Done():
					return nil
				}
				continue
			}
			return err
		}
		delay = 0
		r.conns.Add(1)
		src := addrOf(c.RemoteAddr())
		if r.Accept != nil && !r.Accept(src) {
			r.drop(DropSource, 1)
			r.connSource.Add(1)
			c.Close()
			continue
		}
		mu.Lock()
		if byAddr[src] >= maxPer {
			mu.Unlock()
			r.drop(DropConnPer, 1)
			c.Close()
			continue
		}
		if len(conns) >= maxConns {
			mu.Unlock()
			r.drop(DropConnLimit, 1)
			c.Close()
			continue
		}
		conns[c] = struct{}{}
		byAddr[src]++
		mu.Unlock()
		r.open.Add(1)
		wg.Go(func() {
			defer func() {
				mu.Lock()
				delete(conns, c)
				if byAddr[src]--; byAddr[src] == 0 {
					delete(byAddr, src)
				}
				mu.Unlock()
				c.Close()
				r.open.Add(^uint64(0))
			}()
			r.serveConn(ctx, c, src)
		})
	}
}

func (r *Receiver) serveConn(ctx context.Context, c net.Conn, src netip.Addr) {
	idle := r.IdleTimeout
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	fr := NewFrameReader(deadlineReader{c, idle}, r.maxMessage())
	oversize := 0
	for {
		b, err := fr.Next()
		if n := fr.Oversize - oversize; n > 0 {
			r.lines.Add(uint64(n))
			r.drop(DropOversize, uint64(n))
			oversize = fr.Oversize
		}
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, ErrFraming):
				r.drop(DropFraming, 1)
			case errors.As(err, &ne) && ne.Timeout():
				r.idle.Add(1)
			}
			return
		}
		r.lines.Add(1)
		r.handle(ctx, src, b)
	}
}

// deadlineReader extends a connection's read deadline before each read,
// so a connection silent for idle is closed.
type deadlineReader struct {
	c    net.Conn
	idle time.Duration
}

func (d deadlineReader) Read(p []byte) (int, error) {
	if err := d.c.SetReadDeadline(time.Now().Add(d.idle)); err != nil {
		return 0, err
	}
	return d.c.Read(p)
}

// addrOf is the IP address of a UDP or TCP peer, IPv4-mapped IPv6
// addresses unmapped.
func addrOf(a net.Addr) netip.Addr {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.UDPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	return ip.Unmap()
}
