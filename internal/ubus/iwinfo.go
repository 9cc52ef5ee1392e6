package ubus

import "context"

// IwinfoInfo is the reply of iwinfo info {"device": ...} (rpcd's iwinfo
// plugin, rpc_iwinfo_info).
type IwinfoInfo struct {
	Phy             string `json:"phy"`
	SSID            string `json:"ssid"`
	BSSID           string `json:"bssid"`
	Country         string `json:"country"`
	Mode            string `json:"mode"` // "Master" for an AP
	Channel         int    `json:"channel"`
	CenterChan1     int    `json:"center_chan1"`
	CenterChan2     int    `json:"center_chan2"`
	Frequency       int    `json:"frequency"` // MHz
	FrequencyOffset int    `json:"frequency_offset"`
	TXPower         int    `json:"txpower"` // dBm
	TXPowerOffset   int    `json:"txpower_offset"`
	Quality         int    `json:"quality"`
	QualityMax      int    `json:"quality_max"`
	Signal          int    `json:"signal"` // dBm
	Noise           int    `json:"noise"`  // dBm; 0 when the driver does not say
	Bitrate         int    `json:"bitrate"`
	Encryption      struct {
		Enabled        bool     `json:"enabled"`
		WPA            []int    `json:"wpa"`
		Authentication []string `json:"authentication"`
		Ciphers        []string `json:"ciphers"`
	} `json:"encryption"`
	HTModes     []string `json:"htmodes"`
	HWModes     []string `json:"hwmodes"`
	HWModesText string   `json:"hwmodes_text"`
	HWMode      string   `json:"hwmode"`
	HTMode      string   `json:"htmode"`
	Hardware    struct {
		ID   []int  `json:"id"`
		Name string `json:"name"`
	} `json:"hardware"`
}

// IwinfoRate is one direction of an assoclist entry.
type IwinfoRate struct {
	Packets  int64 `json:"packets"`
	Bytes    int64 `json:"bytes"`
	Failed   int64 `json:"failed"`  // tx only
	Retries  int64 `json:"retries"` // tx only
	DropMisc int64 `json:"drop_misc"`
	HT       bool  `json:"ht"`
	VHT      bool  `json:"vht"`
	HE       bool  `json:"he"`
	EHT      bool  `json:"eht"`
	MHz      int   `json:"mhz"`
	Rate     int   `json:"rate"` // kbit/s
	MCS      int   `json:"mcs"`
	NSS      int   `json:"nss"`
	ShortGI  bool  `json:"short_gi"`
	HEGI     int   `json:"he_gi"`
	HEDCM    int   `json:"he_dcm"`
}

// IwinfoStation is one entry of iwinfo assoclist.
type IwinfoStation struct {
	MAC           string     `json:"mac"` // upper case, as iwinfo prints it
	Signal        int        `json:"signal"`
	SignalAvg     int        `json:"signal_avg"`
	Noise         int        `json:"noise"`
	Inactive      int        `json:"inactive"`       // ms since the last frame
	ConnectedTime int        `json:"connected_time"` // s
	Thr           int        `json:"thr"`            // expected throughput, kbit/s
	Authorized    bool       `json:"authorized"`
	Authenticated bool       `json:"authenticated"`
	Preamble      string     `json:"preamble"`
	WME           bool       `json:"wme"`
	MFP           bool       `json:"mfp"`
	TDLS          bool       `json:"tdls"`
	RX            IwinfoRate `json:"rx"`
	TX            IwinfoRate `json:"tx"`
}

// SurveyEntry is one channel of iwinfo survey: times in ms over the
// driver's survey period.
type SurveyEntry struct {
	MHz         int   `json:"mhz"`
	Noise       int   `json:"noise"` // as the AP sends it; see NoiseDBm
	ActiveTime  int64 `json:"active_time"`
	BusyTime    int64 `json:"busy_time"`
	BusyTimeExt int64 `json:"busy_time_ext"`
	RXTime      int64 `json:"rx_time"`
	TXTime      int64 `json:"tx_time"`
}

// NoiseDBm gives the entry's noise floor in dBm: rpcd sends the driver's
// signed byte unsigned (-91 dBm arrives as 165), so values over 127 wrap.
// It is false when the driver gave none (0).
func (e SurveyEntry) NoiseDBm() (int, bool) {
	switch {
	case e.Noise == 0:
		return 0, false
	case e.Noise > 127 && e.Noise < 256:
		return e.Noise - 256, true
	}
	return e.Noise, true
}

// IwinfoDevices calls iwinfo devices: the wireless interfaces, AP or not.
// Errors are those of Call.
func (c *Client) IwinfoDevices(ctx context.Context) ([]string, error) {
	var r struct {
		Devices []string `json:"devices"`
	}
	err := c.Call(ctx, "iwinfo", "devices", nil, &r)
	return r.Devices, err
}

type deviceArg struct {
	Device string `json:"device"`
}

// IwinfoInfo calls iwinfo info for device (an interface such as
// "phy0-ap0"). Errors are those of Call; ErrNotFound means no such
// device.
func (c *Client) IwinfoInfo(ctx context.Context, device string) (IwinfoInfo, error) {
	var r IwinfoInfo
	err := c.Call(ctx, "iwinfo", "info", deviceArg{device}, &r)
	return r, err
}

// IwinfoAssoclist calls iwinfo assoclist for device. Errors are those of
// IwinfoInfo.
func (c *Client) IwinfoAssoclist(ctx context.Context, device string) ([]IwinfoStation, error) {
	var r struct {
		Results []IwinfoStation `json:"results"`
	}
	err := c.Call(ctx, "iwinfo", "assoclist", deviceArg{device}, &r)
	return r.Results, err
}

// IwinfoSurvey calls iwinfo survey for device. Errors are those of
// IwinfoInfo.
func (c *Client) IwinfoSurvey(ctx context.Context, device string) ([]SurveyEntry, error) {
	var r struct {
		Results []SurveyEntry `json:"results"`
	}
	err := c.Call(ctx, "iwinfo", "survey", deviceArg{device}, &r)
	return r.Results, err
}
