package simulate

import (
	"strconv"
	"time"
)

// Scope is where an incident is, named as wnms names it (decisions §24):
// Type site (ID the site's location id), floor (its location id), ap (ID
// the AP's MAC, Name its name), ssid (ID and Name the SSID), band (ID
// BAND_2_4_GHZ or BAND_5_GHZ) or radiusServer (ID its address).
type Scope struct {
	Type string `json:"type"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Cause is why an incident's clients fail: the stage (association,
// authentication, dhcp, dns or performance) and the failure of most of
// them (0, 0 for performance, whose clients do not fail), with the
// failure catalogue's text of the sub-failure.
type Cause struct {
	Stage          string `json:"stage"`
	FailureCode    int    `json:"failureCode"`
	SubFailureCode int    `json:"subFailureCode"`
	Text           string `json:"text"`
}

// causes is the expected cause of each kind: the (stage, failure) most of
// its affected clients have.
var causes = map[string]Cause{
	RadiusDown:     {"authentication", 2, 203, "RADIUS server unreachable"},
	RadiusReject:   {"authentication", 2, 202, "Credentials rejected by RADIUS"},
	WrongPSK:       {"authentication", 2, 201, "Wrong pre-shared key"},
	DHCPExhaustion: {"dhcp", 3, 301, "No DHCP offer"},
	SlowDHCP:       {"dhcp", 3, 301, "No DHCP offer"},
	APDown:         {"association", 1, 102, "Association timed out"},
	BadAP:          {"association", 1, 101, "Association rejected by AP"},
	Interference:   {"performance", 0, 0, "High retry rate and low data rate"},
}

// Truth is the ground truth of a placed incident (its summary): its kind,
// site, window, expected cause and the narrowest scope that holds its
// affected clients. Scopes that hold exactly the same clients are listed
// as equivalent (a RADIUS trouble at one site hits exactly its 802.1X
// clients: the corp SSID's, and those of the RADIUS server the site
// asks). The site's location id is known once Setup has run.
func (in Incident) Truth() IncidentSummary {
	s := in.Site
	is := IncidentSummary{Kind: in.Kind, Site: s.Name, SiteID: s.LocID,
		From: time.UnixMilli(in.From).UTC().Format(time.RFC3339), To: time.UnixMilli(in.To).UTC().Format(time.RFC3339),
		FromMs: in.From, ToMs: in.To, Cause: causes[in.Kind]}
	site := Scope{"site", strconv.FormatInt(s.LocID, 10), s.Name}
	switch in.Kind {
	case RadiusDown, RadiusReject:
		is.Scope = site
		is.Equivalent = []Scope{{"ssid", SSIDCorp, SSIDCorp}, {"radiusServer", RadiusServer, RadiusServer}}
		is.SSID = SSIDCorp
	case WrongPSK:
		is.Scope = Scope{"ssid", PSKSSID, PSKSSID}
		is.SSID = PSKSSID
	case DHCPExhaustion, SlowDHCP:
		is.Scope = site
	case APDown, BadAP:
		is.AP = in.AP.Name
		is.Scope = Scope{"ap", in.AP.MAC, in.AP.Name}
		if in.Kind == BadAP {
			is.Band = "BAND_5_GHZ"
		}
	case Interference:
		is.Channel = InterferenceChannel
		is.Band = "BAND_5_GHZ"
		is.Scope = Scope{"band", "BAND_5_GHZ", "5 GHz"}
	}
	return is
}
