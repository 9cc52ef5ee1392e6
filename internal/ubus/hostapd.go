package ubus

import "context"

// RxTx is a pair of counters or rates, received and sent, from the AP's
// point of view (rx: from the client).
type RxTx struct {
	RX int64 `json:"rx"`
	TX int64 `json:"tx"`
}

// HostapdClients is the reply of hostapd.<if> get_clients (OpenWrt
// hostapd src/ap/ubus.c, hostapd_bss_get_clients): the radio's frequency
// and its stations by MAC address, in lower case as hostapd prints them.
type HostapdClients struct {
	Freq    int                      `json:"freq"` // MHz
	Clients map[string]HostapdClient `json:"clients"`
}

// HostapdClient is one station of get_clients. The flags are always
// there; Bytes, Airtime, Packets, Rate and Signal come from the driver's
// station data and are zero when hostapd could not read it (older
// hostapd builds do not send them at all).
type HostapdClient struct {
	Auth       bool `json:"auth"`
	Assoc      bool `json:"assoc"`
	Authorized bool `json:"authorized"`
	Preauth    bool `json:"preauth"`
	WDS        bool `json:"wds"`
	WMM        bool `json:"wmm"`
	WME        bool `json:"wme"` // some builds name the WMM flag "wme"
	HT         bool `json:"ht"`
	VHT        bool `json:"vht"`
	HE         bool `json:"he"`
	WPS        bool `json:"wps"`
	MFP        bool `json:"mfp"`

	RRM                  []int  `json:"rrm"` // RM enabled capabilities, 5 octets
	ExtendedCapabilities []int  `json:"extended_capabilities"`
	AID                  int    `json:"aid"`
	Signature            string `json:"signature"` // taxonomy, when built in

	Bytes   RxTx `json:"bytes"`
	Airtime RxTx `json:"airtime"` // µs
	Packets RxTx `json:"packets"`
	Rate    RxTx `json:"rate"`   // kbit/s of the last frame
	Signal  int  `json:"signal"` // dBm; 0 when not known
}

// HostapdStatus is the reply of hostapd.<if> get_status (hostapd
// src/ap/ubus.c, hostapd_bss_get_status).
type HostapdStatus struct {
	Driver         string `json:"driver"`
	Status         string `json:"status"` // "ENABLED", "DFS", "DISABLED", ...
	BSSID          string `json:"bssid"`
	SSID           string `json:"ssid"`
	Freq           int    `json:"freq"` // MHz
	Channel        int    `json:"channel"`
	OpClass        int    `json:"op_class"`
	BeaconInterval int    `json:"beacon_interval"` // TU
	BSSColor       int    `json:"bss_color"`       // -1 or absent without 802.11ax
	Phy            string `json:"phy"`
	Airtime        struct {
		// Time and TimeBusy are the channel's active and busy time (ms)
		// over hostapd's last survey interval; Utilization is busy/active
		// scaled to 0..255, as in the BSS Load element.
		Time        int64 `json:"time"`
		TimeBusy    int64 `json:"time_busy"`
		Utilization int   `json:"utilization"`
	} `json:"airtime"`
	RRM struct {
		NeighborReportTX int `json:"neighbor_report_tx"`
	} `json:"rrm"`
	WNM struct {
		BSSTransitionQueryRX    int `json:"bss_transition_query_rx"`
		BSSTransitionRequestTX  int `json:"bss_transition_request_tx"`
		BSSTransitionResponseRX int `json:"bss_transition_response_rx"`
	} `json:"wnm"`
	DFS struct {
		CACSeconds     int  `json:"cac_seconds"`
		CACActive      bool `json:"cac_active"`
		CACSecondsLeft int  `json:"cac_seconds_left"`
	} `json:"dfs"`
}

// BusyPercent is the share of the channel's time it was busy, 0..100,
// from Airtime's times (or Utilization when the times are zero), and
// false when neither is known.
func (s HostapdStatus) BusyPercent() (float64, bool) {
	a := s.Airtime
	if a.Time > 0 && a.TimeBusy >= 0 && a.TimeBusy <= a.Time {
		return 100 * float64(a.TimeBusy) / float64(a.Time), true
	}
	if a.Utilization > 0 && a.Utilization <= 255 {
		return 100 * float64(a.Utilization) / 255, true
	}
	return 0, false
}

// HostapdClients calls hostapd.<iface> get_clients. Errors are those of
// Call; ErrNotFound means hostapd serves no such interface (any more).
func (c *Client) HostapdClients(ctx context.Context, iface string) (HostapdClients, error) {
	var r HostapdClients
	err := c.Call(ctx, "hostapd."+iface, "get_clients", nil, &r)
	return r, err
}

// HostapdStatus calls hostapd.<iface> get_status. Errors are those of
// HostapdClients.
func (c *Client) HostapdStatus(ctx context.Context, iface string) (HostapdStatus, error) {
	var r HostapdStatus
	err := c.Call(ctx, "hostapd."+iface, "get_status", nil, &r)
	return r, err
}
