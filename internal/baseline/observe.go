package baseline

// The observations of one slot, from what the clients did in it.

import "github.com/wnms/wnms/internal/wnms"

// ObserveConnectivity counts the clients of a slot. A client listed more
// than once (seen on several floors, bands or SSIDs of the scope) counts
// once, as failing if any of its entries failed.
func ObserveConnectivity(attempts []wnms.ConnAttempt) wnms.Connectivity {
	byMAC := map[string][4]bool{}
	for _, a := range attempts {
		f := byMAC[a.MAC]
		for i := range f {
			f[i] = f[i] || a.Failures[i]
		}
		byMAC[a.MAC] = f
	}
	var c wnms.Connectivity
	for _, f := range byMAC {
		count(&c, f)
	}
	return wnms.CompleteConnectivity(c)
}

// count counts in c one client that attempted, failing in the categories of f.
func count(c *wnms.Connectivity, f [4]bool) { countClients(c, f, 1) }

// countClients counts in c n clients that attempted, each failing in the
// categories of f.
func countClients(c *wnms.Connectivity, f [4]bool, n int) {
	c.Attempting += n
	if f[0] || f[1] || f[2] || f[3] {
		c.Failing += n
	}
	if f[wnms.CategoryAssociation] {
		c.Association += n
	}
	if f[wnms.CategoryAuthentication] {
		c.Authentication += n
	}
	if f[wnms.CategoryNetwork] {
		c.Network += n
	}
}

// SumsOf is the ClientSums of one sample.
func SumsOf(x wnms.SlotSample) wnms.ClientSums {
	c := wnms.ClientSums{MAC: x.MAC, N: 1, Rate: x.DataRateMbps, Retry: x.RetryRatePct, RSSI: x.RSSI, WeakAll: x.RSSI < wnms.LowRSSI}
	if x.BestNeighborRSSI != nil {
		c.WithBetter = 1
		if *x.BestNeighborRSSI >= x.RSSI+wnms.StickyMarginDB {
			c.Better = 1
		}
	}
	return c
}

// ObservePerformance judges each client of a slot by the means of its
// samples: low data rate below 12 Mbps, high retry above 15 %, low RSSI
// below −75 dBm, and sticky when it stayed on an RSSI below −75 dBm
// (every sample) while a neighbour was heard at least 10 dB better (every
// sample that names one, and at least one does).
func ObservePerformance(samples []wnms.SlotSample) wnms.Performance {
	sums := make([]wnms.ClientSums, len(samples))
	for i, x := range samples {
		sums[i] = SumsOf(x)
	}
	return ObservePerformanceSums(sums)
}

// ObservePerformanceSums is ObservePerformance over samples already summed
// (by client and place, as the store aggregates them); a client listed
// more than once is merged first.
func ObservePerformanceSums(sums []wnms.ClientSums) wnms.Performance {
	by := make(map[string]*wnms.ClientSums, len(sums))
	for _, c := range sums {
		if a := by[c.MAC]; a != nil {
			a.Add(c)
		} else {
			cc := c
			by[c.MAC] = &cc
		}
	}
	var p wnms.Performance
	for _, a := range by {
		judge(&p, *a)
	}
	return wnms.CompletePerformance(p)
}

// judge counts in p one client by the means of its samples (sums of them).
func judge(p *wnms.Performance, a wnms.ClientSums) {
	p.Clients++
	if a.N == 0 {
		return
	}
	n := float64(a.N)
	low, retry, weak := a.Rate/n < wnms.LowDataRateMbps, a.Retry/n > wnms.HighRetryPct, a.RSSI/n < wnms.LowRSSI
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
