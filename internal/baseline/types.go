package baseline

// ScopedAttempt is a client's connection attempts of a slot at one
// location, band and SSID: whether it failed, and in which categories
// (the store aggregates a slot's events into these, one per client and
// place).
type ScopedAttempt struct {
	LocationID int64
	Band       string
	SSID       string
	ConnAttempt
}

// ConnObsRow is the connectivity observation of a slot in one scope: a
// location and its subtree, a band (or wnms.BandAny), an SSID ("" for all).
type ConnObsRow struct {
	LocationID int64
	Band       string
	SSID       string
	Slot       int64
	Connectivity
}

// DirtySlot is a slot whose observations are out of date; Version is the
// mark a refresh clears only if no newer one replaced it.
type DirtySlot struct {
	Slot    int64
	Version int64
}

// Anomaly is an anomalous slot recorded by the evaluation.
type Anomaly struct {
	CustomerID  int64   `json:"-"`
	LocationID  int64   `json:"-"`
	Kind        string  `json:"kind"`
	Slot        int64   `json:"timestamp"`
	Observation float64 `json:"observation"`
	Baseline    float64 `json:"baseline"`
	Threshold   float64 `json:"threshold"`
	RaisedAt    int64   `json:"-"`
}

// ScopedSample is a client statistics sample with when and where it was
// taken.
type ScopedSample struct {
	Time       int64
	LocationID int64
	Band       string
	SSID       string
	Sample
}

// ScopedSums are a client's samples of a slot at one location, band and
// SSID, summed (the store aggregates them, so a slot costs its clients,
// not its samples).
type ScopedSums struct {
	LocationID int64
	Band       string
	SSID       string
	ClientSums
}

// PerfObsRow is the performance observation of a slot in one scope.
type PerfObsRow struct {
	LocationID int64
	Band       string
	SSID       string
	Slot       int64
	Performance
}
