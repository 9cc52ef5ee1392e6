package ubus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// The caps of an event stream: a line longer than MaxEventLineBytes, or an
// event (its type and data) larger than MaxEventBytes, ends the stream
// with ErrBadReply rather than growing a buffer. hostapd's notifications
// are a few hundred bytes; an assoc with its HT and VHT capabilities is
// under 2 KiB.
const (
	MaxEventLineBytes = 64 << 10
	MaxEventBytes     = 256 << 10
)

var (
	errLineTooLong  = fmt.Errorf("event stream line over %d bytes", MaxEventLineBytes)
	errEventTooLong = fmt.Errorf("event over %d bytes", MaxEventBytes)
)

// Event is one notification of a hostapd.<if> object, as uhttpd relays it
// ("event: <type>\ndata: <json>\n\n", uhttpd ubus.c,
// uh_ubus_subscription_notification_cb). The types and their data
// (OpenWrt hostapd src/ap/ubus.c and 600-ubus_support.patch):
//
//	probe, auth, assoc   address, target (the frame's destination), signal
//	                     (only when the driver gave one), freq, ifname on
//	                     recent builds, ht_capabilities and vht_capabilities
//	sta-authorized       address, ifname, auth-alg ("open", "sae", "ft",
//	                     ...), vlan and rate-limit when set
//	disassoc, deauth     address, ifname on recent builds; "disassoc" is also
//	                     sent when hostapd drops an authorized station
//	local-deauth, inactive-deauth, key-mismatch, ft-finish   address, ifname
//	beacon-report, bss-transition-response, bss-transition-query,
//	radar-detected, csa, vlan_add, vlan_remove, ...   their own fields (Data)
//
// Fields an event does not carry are zero.
type Event struct {
	Type    string          `json:"-"`
	Address string          `json:"address"` // client MAC, lower case
	Target  string          `json:"target"`
	Signal  int             `json:"signal"` // dBm; 0 when not known
	Freq    int             `json:"freq"`   // MHz
	Ifname  string          `json:"ifname"`
	AuthAlg string          `json:"auth-alg"`
	VLAN    int             `json:"vlan"`
	Data    json.RawMessage `json:"-"` // the whole data object
}

// Stream is an open subscription to an object's notifications. Next gives
// the events in order; the stream ends when its context ends, when the
// connection drops, or when the AP ends it (hostapd removed the object:
// the interface went away or hostapd restarted). The caller subscribes
// again, with back-off (Backoff). A Stream is for one goroutine; Close
// may be called from any.
type Stream struct {
	op     string
	ctx    context.Context
	cancel context.CancelFunc
	body   io.ReadCloser
	r      *eventReader
	once   sync.Once
}

// Subscribe opens uhttpd's event stream of object (GET
// <URL>/subscribe/<object>, the session in an "Authorization: Bearer"
// header, the only place uhttpd reads it for this request). It logs in
// when it has no session and once more if uhttpd refuses the session.
// Establishing the stream is bounded by Timeout; the stream then lasts
// until ctx ends or Close.
//
// Errors are *Error: ErrAccessDenied (the ACL does not grant
// ":subscribe" on the object), ErrNotFound (no such object), and the
// others of Call.
func (c *Client) Subscribe(ctx context.Context, object string) (*Stream, error) {
	op := "subscribe " + object
	sid, fresh, err := c.sid(ctx, "")
	if err != nil {
		return nil, err
	}
	s, err := c.subscribe(ctx, op, sid, object)
	if fresh || !errors.Is(err, ErrAccessDenied) {
		return s, err
	}
	sid, _, err = c.sid(ctx, sid)
	if err != nil {
		return nil, err
	}
	return c.subscribe(ctx, op, sid, object)
}

func (c *Client) subscribe(ctx context.Context, op, sid, object string) (*Stream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		strings.TrimSuffix(c.URL, "/")+"/subscribe/"+url.PathEscape(object), nil)
	if err != nil {
		cancel()
		return nil, &Error{Op: op, Kind: ErrUnreachable, Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+sid)
	req.Header.Set("Accept", "text/event-stream")

	// Only the exchange up to the headers is bounded by Timeout.
	hctx, hcancel := context.WithTimeout(ctx, c.timeout())
	stop := context.AfterFunc(hctx, cancel)
	resp, err := c.httpClient().Do(req)
	timedOut := !stop() && errors.Is(hctx.Err(), context.DeadlineExceeded)
	hcancel()
	if err != nil {
		cancel()
		if timedOut {
			return nil, &Error{Op: op, Kind: ErrTimeout, Err: context.DeadlineExceeded}
		}
		return nil, transportError(ctx, op, err)
	}
	if timedOut {
		resp.Body.Close()
		cancel()
		return nil, &Error{Op: op, Kind: ErrTimeout, Err: context.DeadlineExceeded}
	}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
		resp.Body.Close()
		cancel()
		return nil, &Error{Op: op, Kind: ErrHTTPStatus, HTTPStatus: resp.StatusCode}
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		body, err := readCapped(resp.Body, MaxReplyBytes)
		resp.Body.Close()
		cancel()
		if err != nil {
			return nil, &Error{Op: op, Kind: ErrBadReply, Err: err}
		}
		return nil, decodeRefusal(op, body)
	}
	return &Stream{op: op, ctx: ctx, cancel: cancel, body: resp.Body, r: newEventReader(resp.Body)}, nil
}

// Next waits for the next event. It returns io.EOF when the AP ended the
// stream; an *Error of kind ErrCanceled or ErrTimeout when the stream's
// context ended, ErrUnreachable when the connection broke, ErrBadReply
// for a line or event over the caps (these all close the stream). An
// event whose data is not a JSON object comes with an ErrBadReply error
// and its Type and Data set; the stream stays usable.
func (s *Stream) Next() (Event, error) {
	typ, data, err := s.r.next()
	if err != nil {
		ended := s.ctx.Err() != nil
		s.Close()
		switch {
		case ended:
			return Event{}, transportError(s.ctx, s.op, err)
		case errors.Is(err, io.EOF):
			return Event{}, io.EOF
		case errors.Is(err, errLineTooLong), errors.Is(err, errEventTooLong):
			return Event{}, &Error{Op: s.op, Kind: ErrBadReply, Err: err}
		}
		return Event{}, &Error{Op: s.op, Kind: ErrUnreachable, Err: err}
	}
	return decodeEvent(s.op, typ, data)
}

// Close ends the stream; Next then fails.
func (s *Stream) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.body.Close()
	})
	return nil
}

// decodeEvent fills an Event from a server-sent event's type and data.
func decodeEvent(op, typ string, data []byte) (Event, error) {
	ev := Event{Type: typ, Data: json.RawMessage(data)}
	if d := bytes.TrimSpace(data); len(d) == 0 || d[0] != '{' {
		return ev, &Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf("event %q: data %s is not an object", typ, truncate(data))}
	}
	if err := json.Unmarshal(data, &ev); err != nil {
		return Event{Type: typ, Data: json.RawMessage(data)},
			&Error{Op: op, Kind: ErrBadReply, Err: fmt.Errorf("event %q: %w", typ, err)}
	}
	return ev, nil
}

// eventReader reads server-sent events (the WHATWG HTML "event stream"
// format) with capped lines and events. Lines end in "\n" or "\r\n" (a
// lone "\r" is not a line end here: uhttpd writes "\n").
type eventReader struct {
	br *bufio.Reader
}

// eventReadBuffer is an event stream's read buffer. A stream lasts as
// long as the poller follows the AP, one for each of its interfaces, so
// the buffer is kept small (hostapd's events are a few hundred bytes);
// a longer line is gathered apart, up to MaxEventLineBytes. A buffer of
// MaxEventLineBytes held 64 KiB per interface of every AP followed: 34
// MB of the heap at 500 APs (docs/bench-pollers.md).
const eventReadBuffer = 4 << 10

func newEventReader(r io.Reader) *eventReader {
	return &eventReader{br: bufio.NewReaderSize(r, eventReadBuffer)}
}

// readLine reads a line with its end, or fails with errLineTooLong when
// it has more than MaxEventLineBytes before its "\r\n".
func (r *eventReader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	long := slices.Clone(line)
	for {
		line, err = r.br.ReadSlice('\n')
		if len(long)+len(line) > MaxEventLineBytes+2 {
			return nil, errLineTooLong
		}
		long = append(long, line...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return long, err
		}
	}
}

// next gives the next event's type ("message" when the stream names
// none) and data (its data lines joined by "\n"). Comments, id and retry
// fields and events without data are skipped. It fails with io.EOF at the
// end of the stream (an event not ended by a blank line is dropped, as
// the format says), errLineTooLong or errEventTooLong.
func (r *eventReader) next() (string, []byte, error) {
	var typ string
	var data []byte
	hasData := false
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", nil, io.EOF
			}
			return "", nil, err
		}
		line = bytes.TrimSuffix(line[:len(line)-1], []byte("\r"))
		if len(line) > MaxEventLineBytes {
			return "", nil, errLineTooLong
		}
		if len(line) == 0 {
			if !hasData {
				typ = ""
				continue
			}
			if typ == "" {
				typ = "message"
			}
			return typ, data, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			typ = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data = append(data, value...)
			hasData = true
		default:
			// id, retry and unknown fields are of no use here.
			continue
		}
		if len(typ)+len(data) > MaxEventBytes {
			return "", nil, errEventTooLong
		}
	}
}

// Backoff spaces the attempts to reach an AP that failed: Next gives Min,
// then twice the last, up to Max, each less a random part of up to a
// half so APs that failed together do not return together. Reset after a
// success. A Backoff is for one goroutine.
type Backoff struct {
	Min, Max time.Duration // 0: 1 s and 5 min
	last     time.Duration
}

// Next gives the wait before the next attempt.
func (b *Backoff) Next() time.Duration {
	lo, hi := b.Min, b.Max
	if lo <= 0 {
		lo = time.Second
	}
	if hi < lo {
		hi = max(lo, 5*time.Minute)
	}
	switch {
	case b.last == 0:
		b.last = lo
	case b.last < hi/2:
		b.last *= 2
	default:
		b.last = hi
	}
	return b.last - rand.N(b.last/2+1)
}

// Reset starts the next failures from Min again.
func (b *Backoff) Reset() { b.last = 0 }
