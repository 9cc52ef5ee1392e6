package radius

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	rad "layeh.com/radius"
)

// An exchange with an upstream: the encoded request and what verifies
// its answer.
type call struct {
	up        *upstream
	reqAuth   [16]byte
	requireMA bool
	answer    chan []byte // buffered: the first authentic answer
}

// pool sends requests to upstreams from a few UDP sockets of its own and
// matches their answers. A socket offers 256 identifiers; more sockets
// open as requests in flight need them, up to maxSockets.
type pool struct {
	counters *Counters
	mu       sync.Mutex
	socks    []*sock
	closed   bool
}

const maxSockets = 64

type sock struct {
	conn    *net.UDPConn
	pending [256]*call
	used    int
	next    byte
}

var errPoolFull = errors.New("radius: too many requests in flight to upstreams")

// exchange sends the request built by encode (given the identifier
// chosen) to c.up and waits for its authentic answer, or until the
// upstream's timeout or ctx ends.
func (p *pool) exchange(ctx context.Context, c *call, encode func(id byte) ([]byte, error)) ([]byte, error) {
	s, id, err := p.acquire(c)
	if err != nil {
		return nil, err
	}
	defer p.release(s, id)
	wire, err := encode(id)
	if err != nil {
		return nil, err
	}
	// The answer is verified against the authenticator sent, which for
	// accounting is known only once encoded.
	p.mu.Lock()
	copy(c.reqAuth[:], wire[4:20])
	p.mu.Unlock()
	if _, err := s.conn.WriteToUDP(wire, c.up.addr); err != nil {
		return nil, err
	}
	t := time.NewTimer(c.up.timeout)
	defer t.Stop()
	select {
	case a := <-c.answer:
		return a, nil
	case <-t.C:
		return nil, errTimeout
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var errTimeout = errors.New("radius: upstream did not answer in time")

func (p *pool) acquire(c *call) (*sock, byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, 0, net.ErrClosed
	}
	var s *sock
	for _, x := range p.socks {
		if x.used < 256 {
			s = x
			break
		}
	}
	if s == nil {
		if len(p.socks) == maxSockets {
			return nil, 0, errPoolFull
		}
		conn, err := net.ListenUDP("udp", nil)
		if err != nil {
			return nil, 0, err
		}
		s = &sock{conn: conn}
		p.socks = append(p.socks, s)
		go p.read(s)
	}
	for s.pending[s.next] != nil {
		s.next++
	}
	id := s.next
	s.next++
	s.pending[id] = c
	s.used++
	return s, id, nil
}

func (p *pool) release(s *sock, id byte) {
	p.mu.Lock()
	s.pending[id] = nil
	s.used--
	p.mu.Unlock()
}

// read takes the answers arriving on s to the calls waiting for them.
// An answer from another address than the one asked, or that does not
// verify, is dropped and counted.
func (p *pool) read(s *sock) {
	buf := make([]byte, rad.MaxPacketLength+1)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if n < 20 || n > rad.MaxPacketLength {
			p.counters.drop(DropMalformed)
			continue
		}
		l := int(buf[2])<<8 | int(buf[3])
		if l < 20 || l > n {
			p.counters.drop(DropMalformed)
			continue
		}
		p.mu.Lock()
		c := s.pending[buf[1]]
		var reqAuth [16]byte
		if c != nil {
			reqAuth = c.reqAuth
		}
		p.mu.Unlock()
		if c == nil || netip.AddrPortFrom(from.Addr().Unmap(), from.Port()) != c.up.ap {
			p.counters.drop(DropUpstreamUnexpected)
			continue
		}
		if !isAuthenticResponse(buf[:l], reqAuth, c.up.secret, c.requireMA) {
			p.counters.drop(DropUpstreamBadAuthenticator)
			continue
		}
		select {
		case c.answer <- append([]byte(nil), buf[:l]...):
		default: // a second answer to one request
		}
	}
}

func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, s := range p.socks {
		s.conn.Close()
	}
}
