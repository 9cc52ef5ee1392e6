package main

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/wnms/wnms/internal/baseline"
)

// explainPoint is a connectivity or performance data point, the fields
// -explain prints.
type explainPoint struct {
	Timestamp         int64    `json:"timestamp"`
	Observation       float64  `json:"observation"`
	Affected          int      `json:"absoluteObservation"`
	N                 int      `json:"noOfSamplesForObservation"`
	Baseline          *float64 `json:"baseline"`
	StandardDeviation *float64 `json:"standardDeviation"`
	Threshold         *float64 `json:"threshold"`
	Anomalous         bool     `json:"anomalous"`
}

// explain prints, for an incident, the data points of each floor of its
// site from the slot before its start to 2 slots after its end: clients
// attempting (n) and affected (a), the baseline, σ, the threshold, the
// binomial P(X ≥ a | n, max(baseline, 5 %)) and the first condition of
// decisions §24's rule, against the reported mean and σ, that the slot
// fails; th and the flag are the server's own.
func explain(w io.Writer, hc *http.Client, base, cookie string, t Truth, floors []int64) {
	from, to := slotOf(t.FromMs)-slotMs, t.ToMs+lateSlots*slotMs-1
	fmt.Fprintf(w, "explain: %s at %s, %s–%s (ap %q band %q ssid %q)\n", t.Kind, t.Site, t.From, t.To, t.AP, t.Band, t.SSID)
	type view struct{ kind, query string }
	views := []view{{"clientsconnectivity", ""}, {"clientsperformance", ""}}
	if t.Band != "" {
		b := "5GHz"
		if t.Band == "BAND_2_4_GHZ" {
			b = "2.4GHz"
		}
		views = append(views, view{"clientsconnectivity", "&frequencyband=" + b})
	}
	if t.SSID != "" {
		views = append(views, view{"clientsconnectivity", "&ssid=" + url.QueryEscape(t.SSID)})
	}
	for _, f := range floors {
		for _, v := range views {
			var pts []explainPoint
			u := fmt.Sprintf("%s/V5/baselines/%s?locationid=%d&fromtime=%d&totime=%d%s", base, v.kind, f, from, to, v.query)
			if err := getJSON(hc, u, cookie, &pts); err != nil {
				fmt.Fprintf(w, "  floor %d %s%s: %v\n", f, v.kind, v.query, err)
				continue
			}
			fmt.Fprintf(w, "  floor %d %s%s\n", f, v.kind, v.query)
			for _, p := range pts {
				fmt.Fprintf(w, "    %s n=%3d a=%2d obs=%5.1f", msTime(p.Timestamp), p.N, p.Affected, p.Observation)
				if p.Baseline == nil {
					fmt.Fprintln(w, " no baseline")
					continue
				}
				p0 := max(*p.Baseline/100, baseline.MinRate)
				pv := baseline.BinomialTail(p.N, p.Affected, p0)
				ks := *p.Baseline + baseline.DefaultK*max(*p.StandardDeviation, baseline.DefaultMinSigma)
				why := "anomalous"
				switch {
				case p.N < baseline.DefaultMinSamples:
					why = "too few clients"
				case p.Affected < baseline.DefaultMinClients:
					why = "too few affected"
				case p.Observation <= ks:
					why = "under k·σ"
				case pv >= baseline.DefaultAlpha:
					why = "binomial"
				}
				fmt.Fprintf(w, " base=%5.1f σ=%5.1f kσ-bar=%5.1f th=%5.1f p=%.2g %v → %s\n",
					*p.Baseline, *p.StandardDeviation, ks, *p.Threshold, pv, p.Anomalous, why)
			}
		}
	}
}

// msTime is a Unix ms time in UTC, to the minute.
func msTime(ms int64) string { return time.UnixMilli(ms).UTC().Format("01-02 15:04") }

// explainWanted says whether -explain asks to explain an incident: every
// one ("all"), or those missed or found late ("missed": more than 1 slot).
func explainWanted(t Truth, f Flags) bool {
	switch *explainArg {
	case "all":
		return true
	case "missed":
		found, delay := Detect(t, f)
		return !found || delay > 1
	}
	return false
}
