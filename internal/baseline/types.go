package baseline

import "github.com/wnms/wnms/internal/wnms"

// The baseline domain types live in package wnms, where the store reads
// and writes them; these names are the baseline package's own.
type (
	ConnAttempt   = wnms.ConnAttempt
	ScopedAttempt = wnms.ScopedAttempt
	ConnObsRow    = wnms.ConnObsRow
	DirtySlot     = wnms.DirtySlot
	Anomaly       = wnms.Anomaly
	Sample        = wnms.SlotSample
	ScopedSample  = wnms.ScopedSample
	ScopedSums    = wnms.ScopedSums
	PerfObsRow    = wnms.PerfObsRow
	Connectivity  = wnms.Connectivity
	Performance   = wnms.Performance
	ClientSums    = wnms.ClientSums
)

// Failure categories and performance thresholds.
const (
	CategoryAssociation    = wnms.CategoryAssociation
	CategoryAuthentication = wnms.CategoryAuthentication
	CategoryNetwork        = wnms.CategoryNetwork
	LowDataRateMbps        = wnms.LowDataRateMbps
	HighRetryPct           = wnms.HighRetryPct
	LowRSSI                = wnms.LowRSSI
	StickyMarginDB         = wnms.StickyMarginDB
)

// Complete fills the observation and percentages of counts.
func Complete(c Connectivity) Connectivity { return wnms.CompleteConnectivity(c) }

// CompletePerformance fills the observation and percentages of counts.
func CompletePerformance(p Performance) Performance { return wnms.CompletePerformance(p) }
