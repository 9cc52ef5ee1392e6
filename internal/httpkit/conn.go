package httpkit

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// ConnLimits bound the connections a listener holds open at once, so that
// clients that open many connections, or trickle their bodies, cannot use
// up the process's file descriptors: per source address (one address
// cannot crowd out the rest, health checks and logins included) and in
// total. 0 means no limit.
type ConnLimits struct {
	PerAddr int
	Total   int
}

// ErrorBody renders a listener's JSON error envelope for a status and error
// code, for the answers the listener gives outside any handler.
type ErrorBody func(status int, code, message string) []byte

// Listener wraps a net.Listener: it refuses connections beyond its limits
// (an HTTP 429 with the listener's JSON error body, then close), and it
// answers in the listener's JSON error envelope where net/http itself would
// answer a malformed request or oversize headers in plain text.
type Listener struct {
	net.Listener
	limits    ConnLimits
	errorBody ErrorBody

	mu     sync.Mutex
	total  int
	byAddr map[string]int

	refused atomic.Uint64
}

// NewListener wraps ln with the limits and the listener's error envelope.
func NewListener(ln net.Listener, limits ConnLimits, errorBody ErrorBody) *Listener {
	return &Listener{Listener: ln, limits: limits, errorBody: errorBody, byAddr: map[string]int{}}
}

// Refused counts the connections refused for the limits.
func (l *Listener) Refused() uint64 { return l.refused.Load() }

// Open is the number of connections held open now.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Accept returns the next connection within the limits; connections over
// them are answered 429 and closed without reaching the server.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		host := remoteHost(c.RemoteAddr())
		l.mu.Lock()
		over := (l.limits.Total > 0 && l.total >= l.limits.Total) ||
			(l.limits.PerAddr > 0 && l.byAddr[host] >= l.limits.PerAddr)
		if !over {
			l.total++
			l.byAddr[host]++
		}
		l.mu.Unlock()
		if over {
			l.refused.Add(1)
			go l.refuse(c)
			continue
		}
		return &conn{Conn: c, l: l, host: host}, nil
	}
}

// refuse answers a connection over the limits and closes it, spending at
// most a second on it.
func (l *Listener) refuse(c net.Conn) {
	defer c.Close()
	c.SetWriteDeadline(time.Now().Add(time.Second))
	body := l.errorBody(http.StatusTooManyRequests, wnms.RateLimited, "too many open connections; retry later")
	c.Write(append([]byte("HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: application/json\r\n"+
		"Retry-After: 1\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...))
}

func (l *Listener) release(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if l.byAddr[host]--; l.byAddr[host] <= 0 {
		delete(l.byAddr, host)
	}
}

func remoteHost(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// conn is an accepted connection, counted until it closes.
type conn struct {
	net.Conn
	l      *Listener
	host   string
	closed sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.closed.Do(func() { c.l.release(c.host) })
	return err
}

// netHTTPErrorHeaders is how net/http's server writes the headers of its
// own answers to requests it could not parse (oversize headers, a
// malformed request line or header, an unsupported transfer encoding),
// before any handler runs. A handler's answer never has this shape:
// net/http writes handler headers sorted, Connection before Content-Type.
var netHTTPErrorHeaders = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")

// Write passes everything through but net/http's own plain-text error
// answers, which it replaces with the listener's JSON error body.
func (c *conn) Write(b []byte) (int, error) {
	if !bytes.HasPrefix(b, []byte("HTTP/1.1 ")) || len(b) < 12 {
		return c.Conn.Write(b)
	}
	i := bytes.Index(b, netHTTPErrorHeaders)
	if i < 0 || bytes.IndexByte(b[:i], '\n') >= 0 {
		return c.Conn.Write(b)
	}
	status, err := strconv.Atoi(string(b[9:12]))
	if err != nil || status < 400 {
		return c.Conn.Write(b)
	}
	code := wnms.InvalidRequestBody
	message := "the request could not be read: " + string(b[i+len(netHTTPErrorHeaders):])
	if status == http.StatusRequestHeaderFieldsTooLarge {
		code, message = wnms.PayloadTooLarge, "the request headers are too large"
	}
	body := c.l.errorBody(status, code, message)
	out := append([]byte("HTTP/1.1 "+strconv.Itoa(status)+" "+http.StatusText(status)+
		"\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"), body...)
	if _, err := c.Conn.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

// BodyDeadline is how long a request body of n bytes (-1: unknown) may take
// to arrive: 10 s, plus a second for each 64 KiB, so a slow but honest
// upload finishes while a client that trickles its body to hold the
// connection is cut off. max bounds an unknown length.
func BodyDeadline(n, max int64) time.Duration {
	if n < 0 || n > max {
		n = max
	}
	return bodyGrace + time.Duration(n/(64<<10))*time.Second
}

// bodyGrace is the time any body gets; tests shorten it.
var bodyGrace = 10 * time.Second

// CloseWrite half-closes a TCP connection, as net/http does before it
// hangs up on a client whose headers were too large.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// MaxBody is the largest request body any call accepts (a floor's SPM
// file); it bounds the body deadline of a body of unknown length.
const MaxBody = 64 << 20

// LimitBodyTime gives the request's body BodyDeadline to arrive: reading
// it after that fails, and the call answers 400. A declared body gets the
// deadline of its length at once; a body of unknown length (chunked) gets
// the same rule counted as it arrives: 10 s, plus a second for each 64 KiB
// received so far, so a trickle is cut off as soon as a declared one would
// be.
func LimitBodyTime(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	start := time.Now()
	if r.ContentLength > 0 {
		rc.SetReadDeadline(start.Add(BodyDeadline(r.ContentLength, MaxBody)))
		return
	}
	rc.SetReadDeadline(start.Add(BodyDeadline(0, MaxBody)))
	r.Body = &pacedBody{ReadCloser: r.Body, rc: rc, start: start}
}

// RestartBodyTime starts the body's time (LimitBodyTime) again from now:
// for a call that waits its turn before it reads its body.
func RestartBodyTime(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	now := time.Now()
	if b, ok := r.Body.(*pacedBody); ok {
		b.start = now
		b.rc.SetReadDeadline(b.start.Add(BodyDeadline(b.n, MaxBody)))
		return
	}
	http.NewResponseController(w).SetReadDeadline(now.Add(BodyDeadline(r.ContentLength, MaxBody)))
}

// pacedBody moves the read deadline of a body of unknown length as it
// arrives, one second further for each 64 KiB.
type pacedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	start time.Time
	n     int64
}

func (b *pacedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		before := b.n >> 16
		b.n += int64(n)
		if b.n>>16 != before {
			b.rc.SetReadDeadline(b.start.Add(BodyDeadline(b.n, MaxBody)))
		}
	}
	return n, err
}
