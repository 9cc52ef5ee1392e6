package telemetry

import (
	"context"
	"encoding/json"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/wnms"
)

// APSortColumns are the sort keys of the AP lists.
var APSortColumns = []string{"devicename", "boxid", "macaddress", "ipaddress", "lastseen"}

// APProperties are what the filter language may test on APs.
var APProperties = Properties{
	"boxid": wnms.FilterNumber, "name": wnms.FilterText, "macaddress": wnms.FilterText, "ipaddress": wnms.FilterText, "model": wnms.FilterText, "group": wnms.FilterText,
	"troubleshootingstatus": wnms.FilterNumber, "devicecapability": wnms.FilterNumber, "locationid": wnms.FilterNumber,
	"numassocclients": wnms.FilterNumber, "lastseen": wnms.FilterNumber, "upsince": wnms.FilterNumber, "softwareversion": wnms.FilterText, "vendorname": wnms.FilterText,
}

// Store is what telemetry reads and writes.
type Store interface {
	access.Locations
	EventStore
	ClientStore
	TrendStore
	FootfallStore
	// PutExport keeps a file made for a client to download, or a log
	// bundle.
	PutExport(ctx context.Context, f *wnms.File) error
	// LogBundles tells which of keys are log bundles of the customer.
	LogBundles(ctx context.Context, customerID int64, keys []string) (map[string]bool, error)
	// UpsertAPs stores the customer's APs as seen at now (ms), one
	// transaction: a new MAC gets a boxId; a known one keeps it. An AP
	// whose announced liveness was down comes up (UpSince = now); the APs
	// that came up are returned. Radios claim their BSSIDs for the AP.
	UpsertAPs(ctx context.Context, customerID int64, aps []*wnms.AP, now int64) (cameUp []wnms.AP, err error)
	// APsByMAC tells, for each of macs that is one of the customer's APs,
	// its boxId, name and location.
	APsByMAC(ctx context.Context, customerID int64, macs []string) (map[string]wnms.RadioAP, error)
	// APs lists the APs q selects, and how many it selects in all.
	APs(ctx context.Context, q wnms.APQuery) ([]wnms.AP, int, error)
	// MarkAPsDown records as down every AP announced up but not seen since
	// staleBefore (ms) and returns them; each is returned by one call
	// only, whatever the number of replicas.
	MarkAPsDown(ctx context.Context, staleBefore int64) ([]wnms.AP, error)
	// TouchAPs records a heartbeat at now (ms) of the customer's APs
	// boxIDs, without changing their records: lastSeen moves forward,
	// never back. An AP announced down comes up (UpSince = now) and is
	// returned, by one call only whatever the number of replicas.
	TouchAPs(ctx context.Context, customerID int64, boxIDs []int64, now int64) (cameUp []wnms.AP, err error)
}

// EventStore is what the client event calls read and write.
type EventStore interface {
	// RadiosByBSSID tells, for each BSSID known as a radio of one of the
	// customer's APs, that AP.
	RadiosByBSSID(ctx context.Context, customerID int64, bssids []string) (map[string]wnms.RadioAP, error)
	// InsertClientEvents stores events (with bodies, the events as the reads
	// answer them) in one transaction and returns how many were new: an
	// eventId stored before is skipped. When any is new, clients (by
	// boxId; nil: none) are recorded as UpdateClients does, and the
	// baseline slots of the events marked out of date: both may be written
	// behind, but are journalled in the same transaction, so a crash loses
	// neither. The store keeps clients (it reads it, never writes it; the
	// caller must not write it after) and binds bodies without copying
	// them (the caller must not write them while the call runs).
	InsertClientEvents(ctx context.Context, customerID int64, events []*wnms.ClientEvent, bodies [][]byte, clients map[int64]wnms.ClientUpdate, derived ...wnms.DerivedEvent) (int, error)
	// ClientEvents answers q newest first (ties: the later arrival first),
	// as stored bodies, with the count of all matches when q.Count.
	ClientEvents(ctx context.Context, q wnms.EventQuery) ([]json.RawMessage, int, error)
	// Associations lists the customer's Success events between from and
	// to (ms, inclusive) at locs (nil: any), oldest first, at most limit.
	Associations(ctx context.Context, customerID int64, locs []int64, from, to int64, limit int) ([]json.RawMessage, error)
	// SubtreeLocations lists the ids of the customer's locations (and the
	// shared ones) at or below the given paths.
	SubtreeLocations(ctx context.Context, customerID int64, paths []string) ([]int64, error)
}

// ClientStore is what the client calls read and write.
type ClientStore interface {
	// ClientLocations tells where each of boxes (clients of the customer)
	// was last seen; a client never seen is absent.
	ClientLocations(ctx context.Context, customerID int64, boxes []int64) (map[int64]int64, error)
	// UpdateScopedClients records the updates (by boxId) of a caller
	// scoped below the root, in one transaction: it reads where each
	// client was last seen (a client never seen is absent), calls moved
	// with that, updates every client, and then sets the name and username
	// of each client moved returned to those of its update, where the
	// client's latest record is still that update's (same timestamp and
	// location). No other write of the customer's clients, on any
	// replica, lands between the read and the commit. moved must not use
	// the store; an error from it ends the transaction with nothing
	// written and is returned as is.
	UpdateScopedClients(ctx context.Context, customerID int64, updates map[int64]wnms.ClientUpdate,
		moved func(where map[int64]int64) (map[int64]wnms.ClientUpdate, error)) error
	// ClientBoxIDs gives each client MAC its boxId, making one on first
	// sight.
	ClientBoxIDs(ctx context.Context, customerID int64, macs []string) (map[string]int64, error)
	// ClientRadios reads where the clients of macs were last heard, as
	// their stored state says (a MAC with none is left out).
	ClientRadios(ctx context.Context, customerID int64, macs []string) ([]wnms.ClientRadio, error)
	// InsertClientStats stores samples in one transaction and answers how
	// many were new: a sample of a client at a timestamp already stored is
	// a retry and is skipped. clients and the slots are recorded as by
	// InsertClientEvents, which keeps clients likewise.
	InsertClientStats(ctx context.Context, customerID int64, samples []*wnms.Sample, clients map[int64]wnms.ClientUpdate) (int, error)
	// Clients lists the clients q selects, last seen first, and how many
	// it selects in all.
	Clients(ctx context.Context, q wnms.ClientQuery) ([]wnms.Client, int, error)
	// RecentSamples lists the samples of a client since since (ms).
	RecentSamples(ctx context.Context, customerID int64, mac string, since int64) ([]wnms.Sample, error)
}

// TrendPoint is one 5-minute bucket of a trend.
type TrendPoint struct {
	Time  int64   `json:"time"`
	Value float64 `json:"value"`
}

// TrendStore is what the trend calls read and write.
type TrendStore interface {
	// InsertAPStats records heartbeats: each AP's bytes since its previous
	// heartbeat (over now minus PrevSeen) and its client count.
	InsertAPStats(ctx context.Context, customerID int64, aps []*wnms.AP, now int64) error
	// ClientTrend buckets a client's samples between from and to (ms) at
	// locs (nil: any) by 5 minutes, with ssid ("" any): the mean data rate
	// (Mbps), the bytes moved, and the mean retry rate, for buckets with
	// samples (bytes only where reported: ok false otherwise).
	ClientTrend(ctx context.Context, customerID int64, mac, ssid string, locs []int64, from, to int64) ([]wnms.ClientBucket, error)
	// APTrend buckets an AP's heartbeats by 5 minutes: bytes moved, the
	// milliseconds they cover, and the highest client count.
	APTrend(ctx context.Context, customerID, boxID int64, from, to int64) ([]wnms.APBucket, error)
	// InsertRadioStats stores AP radio samples, skipping those of a radio
	// and timestamp stored already, and answers how many it stored.
	InsertRadioStats(ctx context.Context, customerID int64, samples []*wnms.RadioSample) (int, error)
	// RadioTrend buckets an AP's radio samples by 5 minutes, radio by
	// radio (BSSID order), oldest first.
	RadioTrend(ctx context.Context, customerID, boxID int64, from, to int64) ([]wnms.RadioBucket, error)
	// PlaceAP sets an AP's position on its floor's layout (nil: off the
	// plan), nothing else, and answers whether the AP exists.
	PlaceAP(ctx context.Context, customerID, boxID int64, pos *wnms.Position) (bool, error)
}
