package telemetry

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Limits of one ingest request.
const (
	MaxRecords    = 10_000
	MaxIngestBody = 16 << 20
)

// Result is the answer of an ingest call: how many records were stored,
// how many repeated a record stored before (a retry), and why each of the
// others was refused.
type Result struct {
	Accepted   int         `json:"accepted"`
	Duplicates int         `json:"duplicates"`
	Rejected   []Rejection `json:"rejected"`
}

// Rejection says why the record at Index (0-based, in the order sent) was
// refused. Its neighbours are stored regardless.
type Rejection struct {
	Index     int    `json:"index"`
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

// reject records why record i was refused.
func (r *Result) reject(i int, err error) {
	e, ok := err.(*wnms.Error)
	if !ok {
		e = wnms.Errorf(wnms.InternalError, "internal error")
	}
	r.Rejected = append(r.Rejected, Rejection{Index: i, ErrorCode: e.Code, Message: e.Message})
}

// MaxRecordBytes is the largest one record may be.
const MaxRecordBytes = 64 << 10

// SplitRecords splits an ingest body into its records: a JSON array of
// objects, or NDJSON (one object a line; blank lines are skipped). It
// walks the body once and keeps each record as a slice of it, so its cost
// is a small multiple of the body whatever the body holds. The whole body
// is refused (INVALID_REQUEST_BODY) at the first element that is not a
// JSON object, and at the first record over MaxRecordBytes; more than
// MaxRecords records is PAYLOAD_TOO_LARGE. An NDJSON line that starts an
// object but is broken, or an object whose fields are wrong, is left for
// its own rejection, so that it does not sink its neighbours.
func SplitRecords(body []byte) ([]json.RawMessage, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return nil, wnms.Errorf(wnms.InvalidRequestBody, "the body holds no records: send a JSON array or NDJSON")
	}
	if err := wnms.CheckJSONText(b); err != nil {
		return nil, err
	}
	switch b[0] {
	case '[':
		return splitArray(b)
	case '{':
		return splitLines(b)
	}
	return nil, wnms.Errorf(wnms.InvalidRequestBody, "the body must be a JSON array of records or NDJSON (one JSON object a line)")
}

// notARecord is the error for element i of a body that is not a record.
func notARecord(i int, what string) error {
	return wnms.Errorf(wnms.InvalidRequestBody, "record %d %s: every record is a JSON object of at most %d KiB", i, what, MaxRecordBytes>>10)
}

// splitArray reads a JSON array of objects.
func splitArray(b []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // the '['
		return nil, wnms.JSONError(err, "")
	}
	var recs []json.RawMessage
	var raw json.RawMessage // reused: records are kept as slices of b
	for i := 0; dec.More(); i++ {
		start := int(dec.InputOffset())
		for start < len(b) && (b[start] == ',' || isSpace(b[start])) {
			start++
		}
		if start < len(b) && b[start] != '{' {
			return nil, notARecord(i, "is not an object")
		}
		if err := dec.Decode(&raw); err != nil {
			return nil, wnms.JSONError(err, "")
		}
		end := int(dec.InputOffset())
		if end-start > MaxRecordBytes {
			return nil, notARecord(i, "is too large")
		}
		if len(recs) == MaxRecords {
			return nil, wnms.Errorf(wnms.PayloadTooLarge, "at most %d records a request", MaxRecords)
		}
		recs = append(recs, json.RawMessage(b[start:end:end]))
	}
	if _, err := dec.Token(); err != nil { // the ']'
		return nil, wnms.JSONError(err, "")
	}
	if rest := bytes.TrimSpace(b[dec.InputOffset():]); len(rest) > 0 {
		return nil, wnms.Errorf(wnms.InvalidRequestBody, "the body goes on after its array")
	}
	return recs, nil
}

// splitLines reads NDJSON: each line that is not blank is one object. It
// walks the lines without listing them, so blank lines cost nothing.
func splitLines(b []byte) ([]json.RawMessage, error) {
	var recs []json.RawMessage
	for i := 0; len(b) > 0; {
		line := b
		if n := bytes.IndexByte(b, '\n'); n >= 0 {
			line, b = b[:n], b[n+1:]
		} else {
			b = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		// A line that starts an object but is broken is kept for its own
		// rejection (one corrupted line does not lose the batch); a line
		// that is no object at all ends the body.
		switch {
		case len(line) > MaxRecordBytes:
			return nil, notARecord(i, "is too large")
		case line[0] != '{':
			return nil, notARecord(i, "is not a JSON object")
		case len(recs) == MaxRecords:
			return nil, wnms.Errorf(wnms.PayloadTooLarge, "at most %d records a request", MaxRecords)
		}
		recs = append(recs, json.RawMessage(line))
		i++
	}
	return recs, nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// decodeRecord decodes one record into v: a JSON object, fields of the
// right types (INVALID_REQUEST_BODY otherwise). The text was checked (valid
// UTF-8, no lone surrogates) with the whole body by SplitRecords; one
// decoding pass does the rest.
func decodeRecord(raw json.RawMessage, v any) error {
	if b := bytes.TrimSpace(raw); len(b) == 0 || b[0] != '{' {
		return wnms.Errorf(wnms.InvalidRequestBody, "a record must be a JSON object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return wnms.JSONError(err, "")
	}
	return nil
}

// checkEnum checks that v is one of allowed, in any case, and returns the
// allowed spelling; an unknown value is INVALID_REQUEST_BODY.
func checkEnum(field, v string, allowed ...string) (string, error) {
	for _, a := range allowed {
		if strings.EqualFold(v, a) {
			return a, nil
		}
	}
	e := wnms.Errorf(wnms.InvalidRequestBody, "%s: unknown value %q; one of %s", field, v, strings.Join(allowed, ", "))
	e.MoreInfo = field
	return "", e
}

// checkChannel checks a record's channel: 1 to MaxChannel, or 0 (not
// known) in a data source's record.
func checkChannel(ch int, fromSource bool) error {
	if (ch == 0 && fromSource) || (ch >= 1 && ch <= MaxChannel) {
		return nil
	}
	return wnms.Invalid("channel", "must be 1 to %d", MaxChannel)
}

// parseSubject reads the fields every client record carries: the client's
// MAC, the BSSID it was heard on, and when (ms, at most a day after now).
//
// A data source's record (fromSource) may name no BSSID: RADIUS and
// syslog do not always say which radio a client used.
func parseSubject(macIn, bssidIn *string, ts *int64, now time.Time, fromSource bool) (mac, bssid string, at int64, err error) {
	if macIn == nil {
		return "", "", 0, wnms.Invalid("macAddress", "required")
	}
	mac, ok := ParseMAC(*macIn)
	if !ok {
		return "", "", 0, wnms.Invalid("macAddress", "%q is not a MAC address (six hex octets separated by ':' or '-')", *macIn)
	}
	if fromSource && (bssidIn == nil || *bssidIn == "") {
		bssid = ""
	} else if bssidIn == nil {
		return "", "", 0, wnms.Invalid("bssid", "required")
	} else if bssid, ok = ParseMAC(*bssidIn); !ok {
		return "", "", 0, wnms.Invalid("bssid", "%q is not a BSSID (six hex octets separated by ':' or '-')", *bssidIn)
	}
	if ts == nil || *ts <= 0 {
		return "", "", 0, wnms.Invalid("timestamp", "required: epoch milliseconds")
	}
	if time.UnixMilli(*ts).After(now.Add(maxFutureSkew)) {
		return "", "", 0, wnms.Invalid("timestamp", "more than a day in the future")
	}
	return mac, bssid, *ts, nil
}
