package baseline

import (
	"fmt"
	"testing"
)

// BenchmarkThresholdDay is what the anomaly rule adds to a read of a
// day's baseline: the effective bar of 96 slots (its binomial test
// included) for a scope of n clients a slot, the baseline rate 2 %.
//
//	go test -run X -bench ThresholdDay ./internal/baseline
func BenchmarkThresholdDay(b *testing.B) {
	p := Params{K: DefaultK, MinSamples: DefaultMinSamples, MinClients: DefaultMinClients, MinSigma: DefaultMinSigma, Alpha: DefaultAlpha}
	for _, n := range []int{10, 100, 1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) {
			var sink float64
			for b.Loop() {
				for slot := range 96 {
					sink += Threshold(2, 1.5, n+slot, p)
				}
			}
			if sink == 0 {
				b.Fatal("no threshold")
			}
		})
	}
}
