package wnms

import (
	"strconv"
	"time"
)

// MaxAhead is how far past the present a time parameter may reach: a
// window may end a little in the future (a clock ahead of ours, "until
// tomorrow"), never at the end of time.
const MaxAhead = 24 * time.Hour

// Window is a closed time window [From, To] in Unix milliseconds, as the
// fromtime/totime (or startdate/enddate) parameters of a call give it.
// FromParam and ToParam name those parameters in errors.
type Window struct {
	From, To           int64
	FromParam, ToParam string
}

// CheckInstant checks one time parameter: epoch milliseconds in
// [0, now + MaxAhead]. It returns INVALID_PARAMETER naming param.
func CheckInstant(param string, v int64, now time.Time) error {
	if v < 0 || v > now.Add(MaxAhead).UnixMilli() {
		return ParamError(param, "%s must be epoch milliseconds between 0 and one day from now", param)
	}
	return nil
}

// Check validates the window before any work is done on it: both ends in
// [0, now + MaxAhead], From not after To, and To − From at most max (0: no
// limit beyond the ends' own range). Every call that takes a window checks
// it here, so that nothing downstream loops over an unchecked range. It
// returns INVALID_PARAMETER naming the offending parameter.
func (w Window) Check(now time.Time, max time.Duration) error {
	if err := CheckInstant(w.FromParam, w.From, now); err != nil {
		return err
	}
	if err := CheckInstant(w.ToParam, w.To, now); err != nil {
		return err
	}
	if w.From > w.To {
		return ParamError(w.FromParam, "%s %d is after %s %d", w.FromParam, w.From, w.ToParam, w.To)
	}
	if max > 0 && w.To-w.From > max.Milliseconds() {
		return ParamError(w.FromParam, "the window covers at most %s; narrow %s and %s", Days(max), w.FromParam, w.ToParam)
	}
	return nil
}

// Days says a duration of whole days in words ("7 days"), else as Go
// prints it.
func Days(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d%day != 0:
		return d.String()
	case d == day:
		return "1 day"
	}
	return strconv.FormatInt(int64(d/day), 10) + " days"
}
