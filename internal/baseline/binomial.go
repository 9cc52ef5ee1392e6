package baseline

import "math"

// BinomialTail is P(X ≥ a) for X binomial with n trials of probability p:
// how likely a or more of n clients are affected when each is with
// probability p. It sums the probabilities from a away from the middle of
// the distribution, where each term is smaller than the one before, each
// relative to the first (computed in log space), so that neither a tiny
// first term (p^n underflows for n in the thousands) nor the sum loses
// precision; below the mean it is 1 − P(X ≤ a − 1), which is then at least
// about one half.
func BinomialTail(n, a int, p float64) float64 {
	switch {
	case a <= 0:
		return 1
	case a > n || p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	if float64(a) > float64(n)*p {
		return sumAway(n, a, p, true)
	}
	return 1 - sumAway(n, a-1, p, false)
}

// sumAway is the sum of the binomial probabilities of k = a, a+1, ..., n
// (up) or k = a, a−1, ..., 0 (down), where they decrease from a on.
func sumAway(n, a int, p float64, up bool) float64 {
	odds := p / (1 - p)
	sum, term := 1.0, 1.0
	for k := a; ; {
		if up {
			if k == n {
				break
			}
			term *= float64(n-k) / float64(k+1) * odds
			k++
		} else {
			if k == 0 {
				break
			}
			term *= float64(k) / float64(n-k+1) / odds
			k--
		}
		sum += term
		if term < sum*1e-18 {
			break // the rest, each term smaller still, no longer counts
		}
	}
	return math.Exp(logBinomialPMF(n, a, p) + math.Log(sum))
}

// logBinomialPMF is the logarithm of P(X = k).
func logBinomialPMF(n, k int, p float64) float64 {
	ln, _ := math.Lgamma(float64(n + 1))
	lk, _ := math.Lgamma(float64(k + 1))
	lnk, _ := math.Lgamma(float64(n - k + 1))
	return ln - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p)
}

// MinSignificant is the fewest affected clients of n whose count is
// improbable at the rate p: the least a with BinomialTail(n, a, p) < alpha,
// or n + 1 when not even all n are.
func MinSignificant(n int, p, alpha float64) int {
	lo, hi := 0, n+1 // BinomialTail(n, n+1, p) = 0 < alpha
	for lo < hi {
		mid := lo + (hi-lo)/2
		if BinomialTail(n, mid, p) < alpha {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
