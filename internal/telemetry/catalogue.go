package telemetry

import (
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

// The catalogues of client events (docs/api.md §16): failures by category
// (failureCode) and cause (subFailureCode), and intermediate events by
// category (categoryCode), type (typeCode) and, where it means something,
// subtype (subTypeCode). The ids are stable.

// Failure categories and their causes.
var failureCatalogue = []catalogueEntry{
	{1, "Association", []catalogueEntry{
		{101, "Association rejected by AP", nil}, {102, "Association timed out", nil},
		{103, "AP at client capacity", nil}, {104, "Unsupported capability", nil}}},
	{2, "Authentication", []catalogueEntry{
		{201, "Wrong pre-shared key", nil}, {202, "Credentials rejected by RADIUS", nil},
		{203, "RADIUS server unreachable", nil}, {204, "EAP exchange timed out", nil},
		{205, "Client certificate rejected", nil}}},
	{3, "Network", []catalogueEntry{
		{301, "No DHCP offer", nil}, {302, "DHCP NAK", nil}, {303, "DNS resolution failed", nil},
		{304, "Default gateway unreachable", nil}, {305, "IP address conflict", nil}}},
}

// Intermediate event categories, types and named subtypes. A type whose
// subtypes are not listed takes any subTypeCode (Disassociated carries the
// 802.11 reason code there). Session ended is a RADIUS accounting Stop:
// its subtype is the Acct-Terminate-Cause (RFC 2866 §5.10, RFC 3580
// §3.21), 0 when the NAS gave none; a cause not listed is taken too.
var eventCatalogue = []catalogueEntry{
	{1, "Association", []catalogueEntry{
		{1, "Associated", nil},
		{2, "Roamed", []catalogueEntry{{0, "Full authentication", nil}, {1, "Fast transition", nil}}},
		{3, "Disassociated", nil},
		{SessionEnded, "Session ended (RADIUS accounting)", terminateCauses}}},
	{2, "Authentication", []catalogueEntry{
		{10, "EAP started", nil}, {11, "RADIUS accept", nil}, {12, "Role assigned", nil}}},
	{3, "Network", []catalogueEntry{
		{30, "DHCP lease obtained", nil}, {31, "DNS reachable", nil}}},
	{4, "Client Steering", []catalogueEntry{
		{20, "Steering", []catalogueEntry{{30, "Skipped during a voice or video call", nil}}},
		{21, "Band steered", []catalogueEntry{{1, "To 5 GHz", nil}}},
		{22, "Load balanced", nil}}},
	{5, "Quarantine", []catalogueEntry{
		{103, "Prevention", []catalogueEntry{{0, "Allowed", nil}, {1, "Blocked", nil}}}}},
	{wnms.CategoryRoaming, "Roaming", []catalogueEntry{
		{wnms.TypeRoam, "Roamed", []catalogueEntry{{0, "Full authentication", nil}, {1, "Fast transition", nil}}}}},
}

// SessionEnded is the typeCode (category 1) of a RADIUS accounting Stop.
const SessionEnded = 4

// terminateCauses are the values of Acct-Terminate-Cause.
var terminateCauses = []catalogueEntry{
	{0, "No cause given", nil}, {1, "User Request", nil}, {2, "Lost Carrier", nil}, {3, "Lost Service", nil},
	{4, "Idle Timeout", nil}, {5, "Session Timeout", nil}, {6, "Admin Reset", nil}, {7, "Admin Reboot", nil},
	{8, "Port Error", nil}, {9, "NAS Error", nil}, {10, "NAS Request", nil}, {11, "NAS Reboot", nil},
	{12, "Port Unneeded", nil}, {13, "Port Preempted", nil}, {14, "Port Suspended", nil},
	{15, "Service Unavailable", nil}, {16, "Callback", nil}, {17, "User Error", nil}, {18, "Host Request", nil},
	{19, "Supplicant Restart", nil}, {20, "Reauthentication Failure", nil}, {21, "Port Reinitialized", nil},
	{22, "Port Administratively Disabled", nil},
}

type catalogueEntry struct {
	code int
	name string
	sub  []catalogueEntry
}

func find(list []catalogueEntry, code int) (catalogueEntry, bool) {
	for _, e := range list {
		if e.code == code {
			return e, true
		}
	}
	return catalogueEntry{}, false
}

// failureNames returns the names of a failure category and cause, and
// whether the pair is in the catalogue.
func failureNames(code, sub int) (failure, subFailure string, ok bool) {
	c, ok := find(failureCatalogue, code)
	if !ok {
		return "", "", false
	}
	s, ok := find(c.sub, sub)
	return c.name, s.name, ok
}

// eventNames returns the names of an intermediate event's category, type
// and subtype, and whether the event is in the catalogue.
func eventNames(category, typ, sub int) (cat, event, subEvent string, ok bool) {
	c, ok := find(eventCatalogue, category)
	if !ok {
		return "", "", "", false
	}
	t, ok := find(c.sub, typ)
	if !ok {
		return "", "", "", false
	}
	if t.sub == nil {
		if typ == 3 && category == 1 {
			return c.name, t.name, "802.11 reason code " + strconv.Itoa(sub), true
		}
		return c.name, t.name, "", true
	}
	s, ok := find(t.sub, sub)
	if !ok && category == 1 && typ == SessionEnded && sub > 0 {
		return c.name, t.name, "Acct-Terminate-Cause " + strconv.Itoa(sub), true
	}
	return c.name, t.name, s.name, ok
}

// Metadata is GET /devices/clientevents/metadata: the intermediate event
// catalogue with its descriptions.
type Metadata struct {
	CategoryType      int             `json:"categoryType"`
	Description       string          `json:"description"`
	EventTypeMetaData []EventTypeMeta `json:"eventTypeMetaData"`
}

// EventTypeMeta is one event type of a category.
type EventTypeMeta struct {
	EventType            int                `json:"eventType"`
	Description          string             `json:"description"`
	EventSubTypeMetaData []EventSubTypeMeta `json:"eventSubTypeMetaData"`
}

// EventSubTypeMeta is one named subtype of an event type.
type EventSubTypeMeta struct {
	EventSubType int    `json:"eventSubType"`
	Description  string `json:"description"`
}

// Catalogue returns the intermediate event catalogue.
func Catalogue() []Metadata {
	out := make([]Metadata, 0, len(eventCatalogue))
	for _, c := range eventCatalogue {
		m := Metadata{CategoryType: c.code, Description: c.name, EventTypeMetaData: []EventTypeMeta{}}
		for _, t := range c.sub {
			tm := EventTypeMeta{EventType: t.code, Description: t.name, EventSubTypeMetaData: []EventSubTypeMeta{}}
			for _, s := range t.sub {
				tm.EventSubTypeMetaData = append(tm.EventSubTypeMetaData, EventSubTypeMeta{s.code, s.name})
			}
			m.EventTypeMetaData = append(m.EventTypeMetaData, tm)
		}
		out = append(out, m)
	}
	return out
}
