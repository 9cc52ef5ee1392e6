package promwifi

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// source is the collector a series comes from.
type source uint8

const (
	srcWifi         source = iota + 1 // wifi: wifi_network_*
	srcWifiStations                   // wifi_stations: wifi_stations, wifi_station_*
	srcHostapd                        // hostapd_stations: hostapd_station_*
	srcDawn                           // dawn: dawn_*
)

// field is what a series' value means.
type field uint8

const (
	fIgnored field = iota // a known series this package does not read

	// per interface
	fNetNoise
	fNetSignal
	fNetBitrate
	fStationCount
	fUtilization // per BSSID (dawn)

	// per station
	fSignal
	fInactiveMs
	fInactiveSeconds
	fExpectedThroughput
	fTxRate
	fRxRate
	fTxPackets
	fRxPackets
	fTxBytes
	fRxBytes
	fConnectedSeconds
	fAuth
	fAssoc
	fHT
	fVHT
	fHE
	fWMM
	fMFP
)

type family struct {
	src   source
	field field
}

// families maps every metric name this package reads to its meaning. The
// names are the collectors' own (see the package documentation).
var families = map[string]family{
	"wifi_network_noise_dbm":  {srcWifi, fNetNoise},
	"wifi_network_signal_dbm": {srcWifi, fNetSignal},
	"wifi_network_bitrate":    {srcWifi, fNetBitrate},
	"wifi_network_quality":    {srcWifi, fIgnored},

	"wifi_stations":                                        {srcWifiStations, fStationCount},
	"wifi_station_signal_dbm":                              {srcWifiStations, fSignal},
	"wifi_station_inactive_milliseconds":                   {srcWifiStations, fInactiveMs},
	"wifi_station_expected_throughput_kilobits_per_second": {srcWifiStations, fExpectedThroughput},
	"wifi_station_transmit_kilobits_per_second":            {srcWifiStations, fTxRate},
	"wifi_station_receive_kilobits_per_second":             {srcWifiStations, fRxRate},
	"wifi_station_transmit_packets_total":                  {srcWifiStations, fTxPackets},
	"wifi_station_receive_packets_total":                   {srcWifiStations, fRxPackets},
	"wifi_station_transmit_bytes_total":                    {srcWifiStations, fTxBytes},
	"wifi_station_receive_bytes_total":                     {srcWifiStations, fRxBytes},

	"hostapd_station_signal_dbm":              {srcHostapd, fSignal},
	"hostapd_station_inactive_seconds":        {srcHostapd, fInactiveSeconds},
	"hostapd_station_connected_seconds_total": {srcHostapd, fConnectedSeconds},
	"hostapd_station_receive_bytes_total":     {srcHostapd, fRxBytes},
	"hostapd_station_transmit_bytes_total":    {srcHostapd, fTxBytes},
	"hostapd_station_receive_packets_total":   {srcHostapd, fRxPackets},
	"hostapd_station_transmit_packets_total":  {srcHostapd, fTxPackets},
	"hostapd_station_flag_auth":               {srcHostapd, fAuth},
	"hostapd_station_flag_assoc":              {srcHostapd, fAssoc},
	"hostapd_station_flag_ht":                 {srcHostapd, fHT},
	"hostapd_station_flag_vht":                {srcHostapd, fVHT},
	"hostapd_station_flag_he":                 {srcHostapd, fHE},
	"hostapd_station_flag_wmm":                {srcHostapd, fWMM},
	"hostapd_station_flag_mfp":                {srcHostapd, fMFP},

	"dawn_ap_channel_utilization_ratio": {srcDawn, fUtilization},
	"dawn_ap_stations_total":            {srcDawn, fIgnored},
	"dawn_station_signal_dbm":           {srcDawn, fIgnored},

	// OpenWrt 21.02 and earlier.
	"hostapd_station_signal":         {srcHostapd, fSignal},
	"hostapd_station_inactive_msec":  {srcHostapd, fInactiveMs},
	"hostapd_station_connected_time": {srcHostapd, fConnectedSeconds},
	"hostapd_station_rx_bytes":       {srcHostapd, fRxBytes},
	"hostapd_station_tx_bytes":       {srcHostapd, fTxBytes},
	"hostapd_station_rx_packets":     {srcHostapd, fRxPackets},
	"hostapd_station_tx_packets":     {srcHostapd, fTxPackets},
}

// collectorOf names the collector a metric name belongs to, including the
// series this package does not read, or 0.
func collectorOf(name string) source {
	switch {
	case strings.HasPrefix(name, "wifi_network_"):
		return srcWifi
	case name == "wifi_stations", strings.HasPrefix(name, "wifi_station_"):
		return srcWifiStations
	case strings.HasPrefix(name, "hostapd_station_"):
		return srcHostapd
	case strings.HasPrefix(name, "dawn_"):
		return srcDawn
	}
	return 0
}

// Parse reads an exposition in the Prometheus text format and returns its
// Wi-Fi series as a Snapshot. Lines that are not Wi-Fi series are ignored
// unparsed; each Wi-Fi line is parsed on its own by the Prometheus text
// parser, so one bad line costs that line only (counted in Skipped). It
// reads at most MaxBodyBytes: a longer input is ErrTooLarge. Read errors are
// returned wrapped. Parse may be called concurrently.
func Parse(r io.Reader) (*Snapshot, error) {
	lr := &io.LimitedReader{R: r, N: MaxBodyBytes + 1}
	br := bufio.NewReaderSize(lr, MaxLineBytes)
	p := newParser()
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: drop all of it.
			if src := collectorOf(string(metricName(line))); src != 0 {
				p.note(src)
				p.skipped.Malformed++
			}
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else if len(line) > 0 {
			p.line(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("promwifi: reading the exposition: %w", err)
		}
	}
	if lr.N <= 0 {
		return nil, ErrTooLarge
	}
	return p.snapshot(), nil
}

type stationKey struct{ ifname, mac string }

type radioAcc struct {
	wifi    Radio // from the wifi and wifi_stations collectors
	hostapd Radio // labels of hostapd_stations (SSID, BSSID, Channel, FrequencyMHz, Encryption)
}

type stationAcc struct {
	wifi    Station // from wifi_stations
	hostapd Station // from hostapd_stations
}

type parser struct {
	tp         expfmt.TextParser
	rd         bytes.Reader
	buf        []byte
	radios     map[string]*radioAcc
	stations   map[stationKey]*stationAcc
	busy       map[string]float64 // channel utilisation (0–1) by BSSID (dawn)
	collectors Collectors
	skipped    Skipped
}

func newParser() *parser {
	return &parser{
		tp:       expfmt.NewTextParser(model.UTF8Validation),
		radios:   map[string]*radioAcc{},
		stations: map[stationKey]*stationAcc{},
		busy:     map[string]float64{},
	}
}

// metricName returns the metric name a sample line starts with (after
// leading blanks), or nil for a line that does not start with one.
func metricName(line []byte) []byte {
	line = bytes.TrimLeft(line, " \t")
	end := bytes.IndexAny(line, "{ \t\r\n")
	if end < 0 {
		end = len(line)
	}
	return line[:end]
}

func (p *parser) note(src source) {
	switch src {
	case srcWifi:
		p.collectors.Wifi = true
	case srcWifiStations:
		p.collectors.WifiStations = true
	case srcHostapd:
		p.collectors.HostapdStations = true
	case srcDawn:
		p.collectors.Dawn = true
	}
}

func (p *parser) line(line []byte) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	line = bytes.TrimLeft(line, " \t")
	if len(line) == 0 {
		return
	}
	if line[0] == '#' {
		// "# HELP name ..." and "# TYPE name type" say a collector ran even
		// when it had no samples to write (no stations).
		f := bytes.Fields(line[1:])
		if len(f) >= 2 && (string(f[0]) == "TYPE" || string(f[0]) == "HELP") {
			p.note(collectorOf(string(f[1])))
		}
		return
	}
	name := string(metricName(line))
	src := collectorOf(name)
	if src == 0 {
		return
	}
	p.note(src)
	fam, ok := families[name]
	if !ok {
		return
	}
	p.buf = append(append(p.buf[:0], line...), '\n')
	p.rd.Reset(p.buf)
	mfs, err := p.tp.TextToMetricFamilies(&p.rd)
	mf := mfs[name]
	if err != nil || mf == nil || len(mf.GetMetric()) != 1 {
		p.skipped.Malformed++
		return
	}
	// No TYPE line goes to the parser with the sample, so it is untyped
	// whatever the exposition declared.
	m := mf.GetMetric()[0]
	u := m.GetUntyped()
	if u == nil {
		p.skipped.Malformed++
		return
	}
	v := u.GetValue()
	var l labels
	for _, lp := range m.GetLabel() {
		l.set(lp.GetName(), lp.GetValue())
	}
	p.sample(fam, &l, v)
}

// labels holds the label values the collectors write.
type labels struct {
	ifname, vif, mac, station                   string
	device, ssid, bssid, mode, country, encrypt string
	channel, frequency                          string
}

func (l *labels) set(name, value string) {
	switch name {
	case "ifname":
		l.ifname = value
	case "vif":
		l.vif = value
	case "mac":
		l.mac = value
	case "station":
		l.station = value
	case "device":
		l.device = value
	case "ssid":
		l.ssid = value
	case "bssid":
		l.bssid = value
	case "mode":
		l.mode = value
	case "country":
		l.country = value
	case "encryption":
		l.encrypt = value
	case "channel":
		l.channel = value
	case "frequency":
		l.frequency = value
	}
}

func (l *labels) iface() string {
	if l.ifname != "" {
		return l.ifname
	}
	return l.vif
}

func (l *labels) macLabel() string {
	if l.mac != "" {
		return l.mac
	}
	return l.station
}

// normalizeMAC returns a 6-byte MAC address in lower-case colon form, or ""
// when s is not one.
func normalizeMAC(s string) string {
	hw, err := net.ParseMAC(s)
	if err != nil || len(hw) != 6 {
		return ""
	}
	return hw.String()
}

// atoiIn returns s as an integer when it is one within [lo, hi], else 0.
func atoiIn(s string, lo, hi int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0
	}
	return n
}

func setStr(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

func setInt(dst *int, v int) {
	if *dst == 0 {
		*dst = v
	}
}

// The value setters keep the first value of a series (a duplicate line does
// not overwrite it).
func setF(dst **float64, v float64) {
	if *dst == nil {
		*dst = &v
	}
}

func setU(dst **uint64, v uint64) {
	if *dst == nil {
		*dst = &v
	}
}

func setB(dst **bool, v bool) {
	if *dst == nil {
		*dst = &v
	}
}

// Value checks. They return ok=false for a value outside what the quantity
// can be; known=false for the collectors' own "unknown" values.
const (
	minDBm     = -150
	maxRateKbp = 100e6 // 100 Gbit/s
	maxCount   = 1 << 20
)

// dBm reads a signal or noise level: 0 (and the wifi collector's -255) mean
// unknown.
func dBm(v float64) (known, ok bool) {
	if v == 0 || v == -255 {
		return false, true
	}
	return true, v < 0 && v >= minDBm
}

// rate reads a bit rate in kbit/s: 0 means unknown.
func rate(v float64) (known, ok bool) {
	if v == 0 {
		return false, true
	}
	return true, v > 0 && v <= maxRateKbp
}

// counter reads a non-negative integer that fits a uint64.
func counter(v float64) (uint64, bool) {
	if v < 0 || v != math.Trunc(v) || v >= 1<<64 {
		return 0, false
	}
	return uint64(v), true
}

func flag(v float64) (bool, bool) {
	switch v {
	case 0:
		return false, true
	case 1:
		return true, true
	}
	return false, false
}

func (p *parser) radio(ifname string) *radioAcc {
	r := p.radios[ifname]
	if r == nil && len(p.radios) < MaxRadios {
		r = &radioAcc{wifi: Radio{IfName: ifname}}
		p.radios[ifname] = r
	}
	return r
}

func (p *parser) sample(fam family, l *labels, v float64) {
	if fam.src == srcDawn {
		p.dawn(fam, l, v)
		return
	}
	ifname := l.iface()
	if ifname == "" {
		p.skipped.NoInterface++
		return
	}
	var mac string
	perStation := fam.field >= fSignal
	if perStation {
		if mac = normalizeMAC(l.macLabel()); mac == "" {
			p.skipped.NoMAC++
			return
		}
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		p.skipped.NaN++
		return
	}
	if !checkValue(fam.field, v) {
		p.skipped.OutOfRange++
		return
	}

	r := p.radio(ifname)
	if r != nil {
		switch fam.src {
		case srcWifi:
			w := &r.wifi
			setStr(&w.Device, l.device)
			setStr(&w.SSID, l.ssid)
			setStr(&w.BSSID, normalizeMAC(l.bssid))
			setStr(&w.Mode, l.mode)
			setStr(&w.Country, l.country)
			setInt(&w.Channel, atoiIn(l.channel, 1, 255))
			setInt(&w.FrequencyMHz, atoiIn(l.frequency, 1, 100000))
		case srcHostapd:
			h := &r.hostapd
			setStr(&h.SSID, l.ssid)
			setStr(&h.BSSID, normalizeMAC(l.bssid))
			setStr(&h.Encryption, l.encrypt)
			setInt(&h.Channel, atoiIn(l.channel, 1, 255))
			setInt(&h.FrequencyMHz, atoiIn(l.frequency, 1, 100000))
		}
	}
	if !perStation {
		if r == nil {
			p.skipped.OverLimit++
			return
		}
		w := &r.wifi
		switch fam.field {
		case fNetNoise:
			if known, _ := dBm(v); known {
				setF(&w.NoiseDBm, v)
			}
		case fNetSignal:
			if known, _ := dBm(v); known {
				setF(&w.SignalDBm, v)
			}
		case fNetBitrate:
			if known, _ := rate(v); known {
				setF(&w.BitrateKbps, v)
			}
		case fStationCount:
			if w.Stations == nil {
				n := int(v)
				w.Stations = &n
			}
		}
		return
	}

	k := stationKey{ifname, mac}
	acc := p.stations[k]
	if acc == nil {
		if len(p.stations) >= MaxStations {
			p.skipped.OverLimit++
			return
		}
		acc = &stationAcc{}
		p.stations[k] = acc
	}
	st := &acc.wifi
	if fam.src == srcHostapd {
		st = &acc.hostapd
	}
	switch fam.field {
	case fSignal:
		if known, _ := dBm(v); known {
			setF(&st.SignalDBm, v)
		}
	case fInactiveMs:
		n, _ := counter(v)
		setU(&st.InactiveMs, n)
	case fInactiveSeconds:
		setU(&st.InactiveMs, uint64(math.Round(v*1000)))
	case fExpectedThroughput, fTxRate, fRxRate:
		if known, _ := rate(v); known {
			switch fam.field {
			case fExpectedThroughput:
				setF(&st.ExpectedThroughputKbps, v)
			case fTxRate:
				setF(&st.TxRateKbps, v)
			default:
				setF(&st.RxRateKbps, v)
			}
		}
	case fTxPackets, fRxPackets, fTxBytes, fRxBytes, fConnectedSeconds:
		n, _ := counter(v)
		switch fam.field {
		case fTxPackets:
			setU(&st.TxPackets, n)
		case fRxPackets:
			setU(&st.RxPackets, n)
		case fTxBytes:
			setU(&st.TxBytes, n)
		case fRxBytes:
			setU(&st.RxBytes, n)
		default:
			setU(&st.ConnectedSeconds, n)
		}
	default:
		b, _ := flag(v)
		switch fam.field {
		case fAuth:
			setB(&st.Authenticated, b)
		case fAssoc:
			setB(&st.Associated, b)
		case fHT:
			setB(&st.HT, b)
		case fVHT:
			setB(&st.VHT, b)
		case fHE:
			setB(&st.HE, b)
		case fWMM:
			setB(&st.WMM, b)
		case fMFP:
			setB(&st.MFP, b)
		}
	}
}

// dawn takes a series of the dawn collector: DAWN's view of the AP's own
// BSSs (the collector writes only those), by BSSID, no interface.
func (p *parser) dawn(fam family, l *labels, v float64) {
	if fam.field != fUtilization {
		return
	}
	bssid := normalizeMAC(l.bssid)
	switch {
	case bssid == "":
		p.skipped.NoMAC++
	case math.IsNaN(v) || math.IsInf(v, 0):
		p.skipped.NaN++
	case v < 0 || v > 1:
		p.skipped.OutOfRange++
	default:
		if _, dup := p.busy[bssid]; !dup {
			if len(p.busy) >= MaxRadios {
				p.skipped.OverLimit++
				return
			}
			p.busy[bssid] = v
		}
	}
}

// checkValue says whether v (finite) is a value the field can take.
func checkValue(f field, v float64) bool {
	switch f {
	case fIgnored:
		return true
	case fNetNoise, fNetSignal, fSignal:
		_, ok := dBm(v)
		return ok
	case fNetBitrate, fExpectedThroughput, fTxRate, fRxRate:
		_, ok := rate(v)
		return ok
	case fStationCount:
		n, ok := counter(v)
		return ok && n <= maxCount
	case fInactiveMs, fTxPackets, fRxPackets, fTxBytes, fRxBytes, fConnectedSeconds:
		_, ok := counter(v)
		return ok
	case fInactiveSeconds:
		return v >= 0 && v*1000 < 1<<63
	default:
		_, ok := flag(v)
		return ok
	}
}

func (p *parser) snapshot() *Snapshot {
	s := &Snapshot{Collectors: p.collectors, Skipped: p.skipped}
	for _, acc := range p.radios {
		r := acc.wifi
		h := acc.hostapd
		setStr(&r.SSID, h.SSID)
		setStr(&r.BSSID, h.BSSID)
		setStr(&r.Encryption, h.Encryption)
		setInt(&r.Channel, h.Channel)
		setInt(&r.FrequencyMHz, h.FrequencyMHz)
		if u, ok := p.busy[r.BSSID]; ok && r.BSSID != "" {
			pct := u * 100
			r.UtilizationPct = &pct
		}
		s.Radios = append(s.Radios, r)
	}
	slices.SortFunc(s.Radios, func(a, b Radio) int { return strings.Compare(a.IfName, b.IfName) })

	for k, acc := range p.stations {
		st := acc.wifi
		h := acc.hostapd
		st.IfName, st.MAC = k.ifname, k.mac
		orF(&st.SignalDBm, h.SignalDBm)
		orF(&st.RxRateKbps, h.RxRateKbps)
		orF(&st.TxRateKbps, h.TxRateKbps)
		orF(&st.ExpectedThroughputKbps, h.ExpectedThroughputKbps)
		orU(&st.RxBytes, h.RxBytes)
		orU(&st.TxBytes, h.TxBytes)
		orU(&st.RxPackets, h.RxPackets)
		orU(&st.TxPackets, h.TxPackets)
		orU(&st.InactiveMs, h.InactiveMs)
		orU(&st.ConnectedSeconds, h.ConnectedSeconds)
		st.Authenticated, st.Associated = h.Authenticated, h.Associated
		st.HT, st.VHT, st.HE, st.WMM, st.MFP = h.HT, h.VHT, h.HE, h.WMM, h.MFP
		if r := p.radios[k.ifname]; r != nil && r.wifi.NoiseDBm != nil {
			n := *r.wifi.NoiseDBm
			st.NoiseDBm = &n
		}
		s.Stations = append(s.Stations, st)
	}
	slices.SortFunc(s.Stations, func(a, b Station) int {
		return cmp.Or(strings.Compare(a.IfName, b.IfName), strings.Compare(a.MAC, b.MAC))
	})
	return s
}

func orF(dst **float64, v *float64) {
	if *dst == nil {
		*dst = v
	}
}

func orU(dst **uint64, v *uint64) {
	if *dst == nil {
		*dst = v
	}
}
