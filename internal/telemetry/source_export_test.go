package telemetry

import (
	"encoding/json"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// ParseSourceEvent and ParseTrafficSample check a data source's record
// given in the ingest format's JSON, for the tests that hold a data
// source's checks against the API's on the same inputs.
func ParseSourceEvent(raw json.RawMessage, now time.Time) (*Event, error) {
	return parseEvent(raw, now, true)
}

func ParseTrafficSample(raw json.RawMessage, now time.Time) (*wnms.Sample, error) {
	return parseSample(raw, now, true)
}
