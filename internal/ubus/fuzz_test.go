package ubus

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// The fuzz targets' seeds are in testdata/fuzz; these hold for any input.

var kinds = []error{ErrAccessDenied, ErrLoginFailed, ErrNotFound, ErrTimeout, ErrInvalidArgument, ErrBadReply}

// checkKind fails unless err is an *Error of one of the kinds a reply can
// have.
func checkKind(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	for _, k := range kinds {
		if e.Kind == k {
			_ = e.Error()
			return
		}
	}
	t.Fatalf("error %v of kind %v", err, e.Kind)
}

func FuzzDecodeReply(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":[0,{"freq":2412,"clients":{}}]}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":[6]}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Access denied"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"hostapd.phy0-ap0":{"get_clients":{}}}}`))
	f.Add([]byte(`{"code":-13,"message":"Permission denied"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var clients HostapdClients
		if err := decodeCall("call", body, 1, &clients); err != nil {
			checkKind(t, err)
		}
		var anything any
		err := decodeCall("call", body, 1, &anything)
		if err != nil {
			checkKind(t, err)
		}
		if again := decodeCall("call", body, 1, new(any)); (err == nil) != (again == nil) {
			t.Fatalf("not deterministic: %v, then %v", err, again)
		}
		if objects, err := decodeList("list", body, 1); err != nil {
			checkKind(t, err)
		} else if objects == nil {
			t.Fatal("no error and no objects")
		}
		if err := decodeRefusal("subscribe", body); err != nil {
			checkKind(t, err)
		} else {
			t.Fatal("a refusal that is not an error")
		}
	})
}

// readAll gives every event of a stream read from r, and the error that
// ended it.
func readAll(r io.Reader) (events [][2]string, err error) {
	er := newEventReader(r)
	for {
		typ, data, err := er.next()
		if err != nil {
			return events, err
		}
		events = append(events, [2]string{typ, string(data)})
	}
}

func FuzzEventReader(f *testing.F) {
	f.Add([]byte("event: assoc\ndata: {\"address\":\"22:d3:75:23:7c:55\",\"signal\":-38,\"freq\":2412}\n\n"))
	f.Add([]byte("retry: 1000\n: comment\r\nevent: a\r\ndata: 1\r\ndata: 2\r\n\r\ndata\n\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		events, err := readAll(bytes.NewReader(stream))
		if !errors.Is(err, io.EOF) && !errors.Is(err, errLineTooLong) && !errors.Is(err, errEventTooLong) {
			t.Fatalf("stream ended by %v", err)
		}
		for _, ev := range events {
			if ev[0] == "" || len(ev[0])+len(ev[1]) > MaxEventBytes {
				t.Fatalf("event %q of %d bytes", ev[0], len(ev[1]))
			}
			if ev[0] != "message" && !bytes.Contains(stream, []byte(ev[0])) {
				t.Fatalf("type %q not from the stream", ev[0])
			}
			e, err := decodeEvent("subscribe", ev[0], []byte(ev[1]))
			if err != nil {
				checkKind(t, err)
			}
			if e.Type != ev[0] {
				t.Fatalf("type %q, decoded %q", ev[0], e.Type)
			}
		}
		// The same stream read a byte at a time gives the same events.
		again, err2 := readAll(iotest.OneByteReader(bytes.NewReader(stream)))
		if len(again) != len(events) || (err == nil) != (err2 == nil) || !errors.Is(err2, err) {
			t.Fatalf("byte by byte: %d events and %v, at once: %d and %v", len(again), err2, len(events), err)
		}
		for i := range events {
			if events[i] != again[i] {
				t.Fatalf("event %d: %q, byte by byte %q", i, events[i], again[i])
			}
		}
	})
}
