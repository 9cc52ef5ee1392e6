package main

import (
	"io"
	"testing"

	"github.com/wnms/wnms/internal/baseline"
)

// The anomaly flags reach the baseline service: the rule of a slot's
// share and the AP test of performance, whose α is --anomaly-alpha too
// (it once kept the default whatever the flag said).
func TestBaselineFlagsApply(t *testing.T) {
	type rules struct {
		K                      float64
		MinSamples, MinClients int
		MinSigma, Alpha        float64
		AP                     baseline.APRule
	}
	def := rules{K: baseline.DefaultK, MinSamples: baseline.DefaultMinSamples, MinClients: baseline.DefaultMinClients,
		MinSigma: baseline.DefaultMinSigma, Alpha: baseline.DefaultAlpha, AP: baseline.DefaultAPRule}
	envRules := def
	envRules.Alpha, envRules.AP.Alpha, envRules.AP.MinDropDB = 0.0001, 0.0001, 6.5
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want rules
	}{
		{"defaults", nil, nil, def},
		{"flags", []string{"--baseline-k", "3", "--baseline-min-samples", "8", "--anomaly-min-clients", "4",
			"--anomaly-min-sigma", "6", "--anomaly-alpha", "0.01", "--ap-anomaly-min-paired", "3",
			"--ap-anomaly-min-rssi-drop", "10", "--ap-anomaly-min-retry-rise", "20"}, nil,
			rules{K: 3, MinSamples: 8, MinClients: 4, MinSigma: 6, Alpha: 0.01,
				AP: baseline.APRule{MinPaired: 3, MinTroubled: baseline.DefaultAPRule.MinTroubled, MinDropDB: 10, MinRisePct: 20, Alpha: 0.01}}},
		{"environment", nil, map[string]string{"WNMS_AP_ANOMALY_MIN_RSSI_DROP": "6.5", "WNMS_ANOMALY_ALPHA": "0.0001"}, envRules},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseServe(tc.args, func(k string) string { return tc.env[k] }, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			b := &baseline.Service{AP: baseline.APRule{MinTroubled: baseline.DefaultAPRule.MinTroubled}}
			c.applyBaselines(b)
			got := rules{K: b.K, MinSamples: b.MinSamples, MinClients: b.MinClients, MinSigma: b.MinSigma, Alpha: b.Alpha, AP: b.AP}
			if got != tc.want {
				t.Errorf("applied %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
