package simulate

import (
	"strconv"
	"time"
)

// Scope is where an incident is, named as wnms names it (decisions §24):
// Type site (ID the site's location id), floor (its location id), ap (ID
// the AP's MAC, Name its name), channel (ID the channel number, Name
// "5 GHz channel 36": the radios of the site on that channel), ssid (ID
// and Name the SSID), band (ID BAND_2_4_GHZ or BAND_5_GHZ) or
// radiusServer (ID its address).
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
	CoverageHole:   {"performance", 0, 0, "Low RSSI"},
	CoChannel:      {"performance", 0, 0, "High retry rate"},
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
		is.Scope, is.Equivalent = interferenceScope(s)
	case CoverageHole:
		// Both radios lose their power: the AP's clients, whatever their
		// band.
		is.AP = in.AP.Name
		is.Scope = Scope{"ap", in.AP.MAC, in.AP.Name}
	case CoChannel:
		// Its 5 GHz radio's clients: the AP, and the channel when no
		// other radio of the site is on it.
		is.AP, is.Band, is.Channel = in.AP.Name, "BAND_5_GHZ", in.AP.Radio5.Channel
		is.Scope = Scope{"ap", in.AP.MAC, in.AP.Name}
		if alone(s, in.AP) {
			ch := strconv.Itoa(in.AP.Radio5.Channel)
			is.Equivalent = []Scope{{"channel", ch, "5 GHz channel " + ch}}
		}
	}
	return is
}

// alone says whether a's 5 GHz radio is the only one of site s on its
// channel.
func alone(s *Site, a *AP) bool {
	for _, f := range s.Floors {
		for _, o := range f.APs {
			if o != a && o.Radio5.Channel == a.Radio5.Channel {
				return false
			}
		}
	}
	return true
}

// interferenceScope is where an interference incident at site s is: its
// clients are those on the 5 GHz radios on InterferenceChannel at the
// site, that is the channel (type channel, ID the channel number) at the
// site; when one AP of the site has the channel, that AP, the channel
// equivalent; the 5 GHz band is equivalent when every 5 GHz radio of the
// site is on the channel.
func interferenceScope(s *Site) (Scope, []Scope) {
	var on []*AP
	all := 0
	for _, f := range s.Floors {
		for _, a := range f.APs {
			all++
			if a.Radio5.Channel == InterferenceChannel {
				on = append(on, a)
			}
		}
	}
	ch := strconv.Itoa(InterferenceChannel)
	channel := Scope{"channel", ch, "5 GHz channel " + ch}
	var equivalent []Scope
	if len(on) == all {
		equivalent = append(equivalent, Scope{"band", "BAND_5_GHZ", "5 GHz"})
	}
	if len(on) == 1 {
		return Scope{"ap", on[0].MAC, on[0].Name}, append([]Scope{channel}, equivalent...)
	}
	return channel, equivalent
}
