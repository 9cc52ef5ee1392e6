package radius

import "sync/atomic"

// Counters are what the RADIUS listeners count, for /metrics. Every
// field only grows.
type Counters struct {
	AccessRequests       atomic.Uint64 // Access-Requests taken from sources (retransmissions too)
	AccessAccepts        atomic.Uint64 // Access-Accepts relayed to sources
	AccessRejects        atomic.Uint64 // Access-Rejects relayed to sources
	AccessChallenges     atomic.Uint64 // Access-Challenges relayed to sources
	AccountingRequests   atomic.Uint64 // Accounting-Requests taken from sources
	AccountingResponses  atomic.Uint64 // Accounting-Responses sent, each after its records were committed
	Retransmissions      atomic.Uint64 // requests seen before, counted when recognised (the proxy sends its stored answer again; accounting answers after the commit)
	UpstreamTimeouts     atomic.Uint64 // requests an upstream left unanswered within its timeout
	UpstreamsFailed      atomic.Uint64 // requests no upstream answered (Failure 2/203)
	Events               atomic.Uint64 // records the Sink committed
	SinkErrors           atomic.Uint64 // Sink calls that failed
	EventsDropped        atomic.Uint64 // records dropped because the Sink fell behind
	AcceptsUnstored      atomic.Uint64 // Access-Accepts relayed before their Success was known to be stored (the wait ran out, or it failed)
	EventsWithoutClient  atomic.Uint64 // observations without a Calling-Station-Id MAC, not recorded
	ConversationsEvicted atomic.Uint64 // authentication conversations evicted at the cap, unreported
	SessionsEvicted      atomic.Uint64 // accounting sessions evicted at the cap (their next delta is lost)
	ForwardsDropped      atomic.Uint64 // accounting packets not passed on to accountingUpstreams (queue full or no answer after retries)
	drops                [dropReasons]atomic.Uint64
}

// Dropped returns how many packets were dropped for reason r.
func (c *Counters) Dropped(r DropReason) uint64 {
	if r < 0 || r >= dropReasons {
		return 0
	}
	return c.drops[r].Load()
}

func (c *Counters) drop(r DropReason) { c.drops[r].Add(1) }
