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

// SplitRecords splits an ingest body into its records: a JSON array of
// objects, or NDJSON (one object a line; blank lines are skipped). The
// body must be one or the other (INVALID_REQUEST_BODY); a record that is
// not a well-formed JSON object is left for its own rejection, so that it
// does not sink its neighbours. More than MaxRecords is PAYLOAD_TOO_LARGE.
func SplitRecords(body []byte) ([]json.RawMessage, error) {
	b := bytes.TrimSpace(body)
	if len(b) == 0 {
		return nil, wnms.Errorf(wnms.InvalidRequestBody, "the body holds no records: send a JSON array or NDJSON")
	}
	if err := wnms.CheckJSONText(b); err != nil {
		return nil, err
	}
	var recs []json.RawMessage
	switch b[0] {
	case '[':
		if err := json.Unmarshal(b, &recs); err != nil {
			return nil, wnms.JSONError(err, "")
		}
	case '{':
		for _, line := range bytes.Split(b, []byte{'\n'}) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			recs = append(recs, json.RawMessage(line))
			if len(recs) > MaxRecords {
				break
			}
		}
	default:
		return nil, wnms.Errorf(wnms.InvalidRequestBody, "the body must be a JSON array of records or NDJSON (one JSON object a line)")
	}
	if len(recs) > MaxRecords {
		return nil, wnms.Errorf(wnms.PayloadTooLarge, "at most %d records a request", MaxRecords)
	}
	return recs, nil
}

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

// parseSubject reads the fields every client record carries: the client's
// MAC, the BSSID it was heard on, and when (ms, at most a day after now).
func parseSubject(macIn, bssidIn *string, ts *int64, now time.Time) (mac, bssid string, at int64, err error) {
	if macIn == nil {
		return "", "", 0, wnms.Invalid("macAddress", "required")
	}
	mac, ok := ParseMAC(*macIn)
	if !ok {
		return "", "", 0, wnms.Invalid("macAddress", "%q is not a MAC address (six hex octets separated by ':' or '-')", *macIn)
	}
	if bssidIn == nil {
		return "", "", 0, wnms.Invalid("bssid", "required")
	}
	if bssid, ok = ParseMAC(*bssidIn); !ok {
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
