package telemetry

import (
	"context"

	"github.com/wnms/wnms/internal/access"
)

// APQuery selects APs of one customer for a list call.
type APQuery struct {
	CustomerID int64
	// Scope are the subtree paths the caller sees (nil: the whole tree);
	// Locations further narrows to the subtrees of the locationid
	// parameters (nil: no narrowing).
	Scope, Locations []string
	MACs             []string
	Capability       int    // bitwise AND with deviceCapability, 0: any
	Active           *bool  // seen since ActiveSince (true) or not (false)
	ActiveSince      int64  // ms
	Name             string // substring of the name, any case
	Filter           *Cond
	Sort             string // a key of APSortColumns
	Ascending        bool
	Offset, Limit    int
}

// APSortColumns are the sort keys of the AP lists.
var APSortColumns = []string{"devicename", "boxid", "macaddress", "ipaddress", "lastseen"}

// APProperties are what the filter language may test on APs.
var APProperties = Properties{
	"boxid": Number, "name": Text, "macaddress": Text, "ipaddress": Text, "model": Text, "group": Text,
	"troubleshootingstatus": Number, "devicecapability": Number, "locationid": Number,
	"numassocclients": Number, "lastseen": Number, "upsince": Number, "softwareversion": Text, "vendorname": Text,
}

// Store is what telemetry reads and writes.
type Store interface {
	access.Locations
	// UpsertAPs stores the customer's APs as seen at now (ms), one
	// transaction: a new MAC gets a boxId; a known one keeps it. An AP
	// whose announced liveness was down comes up (UpSince = now); the APs
	// that came up are returned. Radios claim their BSSIDs for the AP.
	UpsertAPs(ctx context.Context, customerID int64, aps []*AP, now int64) (cameUp []AP, err error)
	// APs lists the APs q selects, and how many it selects in all.
	APs(ctx context.Context, q APQuery) ([]AP, int, error)
	// MarkAPsDown records as down every AP announced up but not seen since
	// staleBefore (ms) and returns them; each is returned by one call
	// only, whatever the number of replicas.
	MarkAPsDown(ctx context.Context, staleBefore int64) ([]AP, error)
}
