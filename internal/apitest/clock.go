package apitest

import (
	"sync/atomic"
	"time"
)

// Clock is a settable clock safe to read from server goroutines while a
// test moves it (requests cross a socket, which the race detector does not
// count as synchronization, so a plain variable would race).
type Clock struct{ ns atomic.Int64 }

// NewClock returns a clock set to t.
func NewClock(t time.Time) *Clock {
	c := &Clock{}
	c.ns.Store(t.UnixNano())
	return c
}

// Now returns the clock's time.
func (c *Clock) Now() time.Time { return time.Unix(0, c.ns.Load()) }

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// UseClock makes the server and the store read time from c.
func (e *Env) UseClock(c *Clock) {
	e.Auth.Now = c.Now
	e.Store.Now = c.Now
	e.API.Telemetry.Now = c.Now
	e.API.Incidents.Now = c.Now
}
