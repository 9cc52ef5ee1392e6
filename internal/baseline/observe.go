package baseline

// The observations of one slot, from what the clients did in it.

// Failure categories (the failureCode of Failure events).
const (
	CategoryAssociation    = 1
	CategoryAuthentication = 2
	CategoryNetwork        = 3
)

// ConnAttempt is one client's connection attempts in a slot and scope:
// it attempted (a Success or Failure event) and failed in the categories
// set (failureCode 1, 2, 3).
type ConnAttempt struct {
	MAC      string
	Failures [4]bool // index by category; [0] is any failure
}

// Connectivity is a slot's connectivity observation.
type Connectivity struct {
	Attempting, Failing                           int     // noOfSamplesForObservation, absoluteObservation
	Observation                                   float64 // 100 × failing / attempting
	Association, Authentication, Network          int     // clients failing in each category
	PctAssociation, PctAuthentication, PctNetwork float64
}

// ObserveConnectivity counts the clients of a slot. A client listed more
// than once (seen on several floors, bands or SSIDs of the scope) counts
// once, as failing if any of its entries failed.
func ObserveConnectivity(attempts []ConnAttempt) Connectivity {
	byMAC := map[string][4]bool{}
	for _, a := range attempts {
		f := byMAC[a.MAC]
		for i := range f {
			f[i] = f[i] || a.Failures[i]
		}
		byMAC[a.MAC] = f
	}
	var c Connectivity
	for _, f := range byMAC {
		c.count(f)
	}
	return Complete(c)
}

// count counts one client that attempted, failing in the categories of f.
func (c *Connectivity) count(f [4]bool) {
	c.Attempting++
	if f[0] || f[1] || f[2] || f[3] {
		c.Failing++
	}
	if f[CategoryAssociation] {
		c.Association++
	}
	if f[CategoryAuthentication] {
		c.Authentication++
	}
	if f[CategoryNetwork] {
		c.Network++
	}
}

// Sample is one client statistics sample.
type Sample struct {
	MAC              string
	DataRateMbps     float64
	RetryRatePct     float64
	RSSI             float64
	BestNeighborRSSI *float64
}

// Performance thresholds of a client's means in a slot.
const (
	LowDataRateMbps = 12.0
	HighRetryPct    = 15.0
	LowRSSI         = -75.0
	StickyMarginDB  = 10.0
)

// Performance is a slot's performance observation.
type Performance struct {
	Clients, Troubled               int // noOfSamplesForObservation, absoluteObservation
	Observation                     float64
	LowDataRate, HighRetry, LowRSSI int
	Sticky                          int
	PctLowDataRate, PctHighRetry    float64
	PctLowRSSI, PctSticky           float64
}

// ClientSums are a client's samples of a slot in one place, summed: all
// the performance observation needs of them, whatever their number. Sums
// of the same client from several places add up (Add).
type ClientSums struct {
	MAC               string
	N                 int     // samples
	Rate, Retry, RSSI float64 // sums of dataRateMbps, retryRatePct, rssi
	// WeakAll: every sample had an RSSI below LowRSSI.
	WeakAll bool
	// WithBetter samples named a best neighbour; Better of them heard it at
	// least StickyMarginDB better than the client's own RSSI.
	Better, WithBetter int
}

// SumsOf is the ClientSums of one sample.
func SumsOf(x Sample) ClientSums {
	c := ClientSums{MAC: x.MAC, N: 1, Rate: x.DataRateMbps, Retry: x.RetryRatePct, RSSI: x.RSSI, WeakAll: x.RSSI < LowRSSI}
	if x.BestNeighborRSSI != nil {
		c.WithBetter = 1
		if *x.BestNeighborRSSI >= x.RSSI+StickyMarginDB {
			c.Better = 1
		}
	}
	return c
}

// Add merges o, sums of the same client, into c.
func (c *ClientSums) Add(o ClientSums) {
	c.N += o.N
	c.Rate += o.Rate
	c.Retry += o.Retry
	c.RSSI += o.RSSI
	c.WeakAll = c.WeakAll && o.WeakAll
	c.Better += o.Better
	c.WithBetter += o.WithBetter
}

// ObservePerformance judges each client of a slot by the means of its
// samples: low data rate below 12 Mbps, high retry above 15 %, low RSSI
// below −75 dBm, and sticky when it stayed on an RSSI below −75 dBm
// (every sample) while a neighbour was heard at least 10 dB better (every
// sample that names one, and at least one does).
func ObservePerformance(samples []Sample) Performance {
	sums := make([]ClientSums, len(samples))
	for i, x := range samples {
		sums[i] = SumsOf(x)
	}
	return ObservePerformanceSums(sums)
}

// ObservePerformanceSums is ObservePerformance over samples already summed
// (by client and place, as the store aggregates them); a client listed
// more than once is merged first.
func ObservePerformanceSums(sums []ClientSums) Performance {
	by := make(map[string]*ClientSums, len(sums))
	for _, c := range sums {
		if a := by[c.MAC]; a != nil {
			a.Add(c)
		} else {
			cc := c
			by[c.MAC] = &cc
		}
	}
	var p Performance
	for _, a := range by {
		p.judge(*a)
	}
	return CompletePerformance(p)
}

// judge counts one client by the means of its samples (sums of them).
func (p *Performance) judge(a ClientSums) {
	p.Clients++
	if a.N == 0 {
		return
	}
	n := float64(a.N)
	low, retry, weak := a.Rate/n < LowDataRateMbps, a.Retry/n > HighRetryPct, a.RSSI/n < LowRSSI
	sticky := a.WeakAll && a.WithBetter > 0 && a.Better == a.WithBetter
	if low {
		p.LowDataRate++
	}
	if retry {
		p.HighRetry++
	}
	if weak {
		p.LowRSSI++
	}
	if sticky {
		p.Sticky++
	}
	if low || retry || weak || sticky {
		p.Troubled++
	}
}

// CompletePerformance fills the observation and percentages of counts.
func CompletePerformance(p Performance) Performance {
	p.Observation, p.PctLowDataRate, p.PctHighRetry, p.PctLowRSSI, p.PctSticky = 0, 0, 0, 0, 0
	if p.Clients > 0 {
		n := float64(p.Clients)
		p.Observation = 100 * float64(p.Troubled) / n
		p.PctLowDataRate = 100 * float64(p.LowDataRate) / n
		p.PctHighRetry = 100 * float64(p.HighRetry) / n
		p.PctLowRSSI = 100 * float64(p.LowRSSI) / n
		p.PctSticky = 100 * float64(p.Sticky) / n
	}
	return p
}

// DataRate is one client's data-rate observation of a slot: the mean of
// its samples' data rates.
func DataRate(rates []float64) Obs {
	if len(rates) == 0 {
		return Obs{}
	}
	var sum float64
	for _, r := range rates {
		sum += r
	}
	return Obs{Value: sum / float64(len(rates)), Samples: len(rates)}
}

// Complete fills the observation and percentages of counts.
func Complete(c Connectivity) Connectivity {
	c.Observation, c.PctAssociation, c.PctAuthentication, c.PctNetwork = 0, 0, 0, 0
	if c.Attempting > 0 {
		n := float64(c.Attempting)
		c.Observation = 100 * float64(c.Failing) / n
		c.PctAssociation = 100 * float64(c.Association) / n
		c.PctAuthentication = 100 * float64(c.Authentication) / n
		c.PctNetwork = 100 * float64(c.Network) / n
	}
	return c
}
