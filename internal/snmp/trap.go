package snmp

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// QueueSize is how many traps wait to be sent before new ones are dropped
// (and counted): a burst never blocks the code that raised it.
const QueueSize = 1024

// ErrTrapsOff says that the policy sends no traps: snmpIntegrationEnabled
// or snmpSettings.trapEnabled is off.
var ErrTrapsOff = errors.New("the SNMP policy sends no traps: snmpIntegrationEnabled and snmpSettings.trapEnabled must both be on")

// Trap is a notification to send to a customer's receivers.
type Trap struct {
	Kind       string // one of the Kind constants
	CustomerID int64
	Vars       []gosnmp.SnmpPDU // the varbinds after sysUpTime and snmpTrapOID
}

// Sender sends traps to the receivers of each customer's SNMP policy
// (snmpServerlist entries with enableTraps, while snmpIntegrationEnabled
// and trapEnabled are on), from one goroutine fed by a bounded queue.
type Sender struct {
	// Policy reads a customer's policy with its secrets.
	Policy  func(ctx context.Context, customerID int64) (*wnms.SNMPPolicy, error)
	Engine  *Engine
	Log     *slog.Logger
	Timeout time.Duration // per receiver (default 2 s)

	queue chan Trap
	traps *metrics.CounterVec

	keysMu sync.Mutex
	keys   map[[32]byte]*usmUser // localized keys per receiver setting
}

// NewSender returns a sender with an empty queue.
func NewSender(policy func(ctx context.Context, customerID int64) (*wnms.SNMPPolicy, error), e *Engine, log *slog.Logger) *Sender {
	return &Sender{Policy: policy, Engine: e, Log: log, Timeout: 2 * time.Second,
		queue: make(chan Trap, QueueSize), keys: map[[32]byte]*usmUser{}}
}

// Trap results, the label of wnms_snmp_traps_total.
const (
	trapSent     = "sent"
	trapFailed   = "failed"
	trapDropped  = "dropped"
	trapDisabled = "disabled"
)

// Instrument registers wnms_snmp_traps_total{kind,result}: sent per
// receiver, failed per receiver, dropped when the queue was full,
// disabled when the policy sends no traps.
func (s *Sender) Instrument(reg *metrics.Registry) {
	s.traps = reg.Counter("wnms_snmp_traps_total", "SNMP traps by kind and what became of them (per receiver).", "kind", "result")
	reg.GaugeFunc("wnms_snmp_trap_queue", "SNMP traps waiting to be sent.", func() float64 { return float64(len(s.queue)) })
}

func (s *Sender) count(kind, result string) {
	if s.traps != nil {
		s.traps.Inc(kind, result)
	}
}

// Send queues t and returns at once; false when the queue was full and
// t was dropped.
func (s *Sender) Send(t Trap) bool {
	select {
	case s.queue <- t:
		return true
	default:
		s.count(t.Kind, trapDropped)
		return false
	}
}

// Run sends queued traps until ctx ends.
func (s *Sender) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-s.queue:
			s.deliver(ctx, t) // failures are counted and logged there
		}
	}
}

// ReceiverResult says whether a trap left for one receiver.
type ReceiverResult struct {
	DestIPAddress   string           `json:"destIpAddress"`
	TrapPort        int              `json:"trapPort"`
	ProtocolVersion wnms.SNMPVersion `json:"protocolVersion"`
	Sent            bool             `json:"sent"`
	Message         string           `json:"message,omitempty"`
}

// deliver sends t now to every receiver of the customer's policy.
func (s *Sender) deliver(ctx context.Context, t Trap) ([]ReceiverResult, error) {
	p, err := s.Policy(ctx, t.CustomerID)
	if err != nil {
		s.count(t.Kind, trapFailed)
		if s.Log != nil {
			s.Log.Error("SNMP trap: reading the policy failed", "kind", t.Kind, "err", err)
		}
		return nil, err
	}
	if !p.SNMPIntegrationEnabled || !p.SNMPSettings.TrapEnabled {
		s.count(t.Kind, trapDisabled)
		return nil, ErrTrapsOff
	}
	results := []ReceiverResult{}
	for _, r := range p.SNMPServerList {
		if !r.EnableTraps {
			continue
		}
		res := ReceiverResult{DestIPAddress: r.DestIPAddress, TrapPort: r.TrapPort, ProtocolVersion: r.ProtocolVersion, Sent: true}
		if err := s.sendTo(p, r, t); err != nil {
			s.count(t.Kind, trapFailed)
			if s.Log != nil {
				s.Log.Warn("SNMP trap not sent", "kind", t.Kind, "receiver", net.JoinHostPort(r.DestIPAddress, strconv.Itoa(r.TrapPort)), "err", err)
			}
			res.Sent, res.Message = false, err.Error()
		} else {
			s.count(t.Kind, trapSent)
		}
		results = append(results, res)
	}
	return results, nil
}

// sendTo sends t to one receiver with its version's security.
func (s *Sender) sendTo(p *wnms.SNMPPolicy, r wnms.SNMPServer, t Trap) error {
	port := r.TrapPort
	if port == 0 {
		port = wnms.DefaultTrapPort
	}
	x := &gosnmp.GoSNMP{Target: r.DestIPAddress, Port: uint16(port), Transport: "udp", Timeout: s.Timeout,
		Community: p.SNMPSettings.VersionOneTwoSettings.CommunityString}
	uptime := uint32(uint64(s.Engine.Now().Sub(s.Engine.Start)/(10*time.Millisecond)) & (1<<32 - 1))
	trap := gosnmp.SnmpTrap{Variables: append([]gosnmp.SnmpPDU{
		{Name: oidSysUpTime.String(), Type: gosnmp.TimeTicks, Value: uptime},
		{Name: oidSnmpTrapOID.String(), Type: gosnmp.ObjectIdentifier, Value: notificationOIDs[t.Kind].String()},
	}, t.Vars...)}
	switch r.ProtocolVersion {
	case wnms.SNMPv1:
		x.Version = gosnmp.Version1
	case wnms.SNMPv3:
		id, err := s.Engine.engineID(p.SNMPSettings.VersionThreeSettings.EngineID)
		if err != nil {
			return err
		}
		u, err := s.user(r, id)
		if err != nil {
			return err
		}
		x.Version, x.SecurityModel, x.MsgFlags = gosnmp.Version3, gosnmp.UserSecurityModel, u.level
		x.SecurityParameters = u.copyFor(s.Engine.Boots, s.Engine.Time())
		x.ContextEngineID = id
	default:
		x.Version = gosnmp.Version2c
	}
	if err := x.Connect(); err != nil {
		return err
	}
	defer x.Conn.Close()
	if x.Version == gosnmp.Version1 {
		v1Trap(&trap, t.Kind, x.Conn.LocalAddr(), uptime)
	}
	_, err := x.SendTrap(trap)
	return err
}

// v1Trap turns an SNMPv2 notification into SNMPv1's form (RFC 3584 §3.2):
// enterprise, agent address, generic and specific trap.
func v1Trap(t *gosnmp.SnmpTrap, kind string, local net.Addr, uptime uint32) {
	t.Variables = t.Variables[2:]
	t.Timestamp = uint(uptime)
	t.AgentAddress = "0.0.0.0"
	if ua, ok := local.(*net.UDPAddr); ok && ua.IP.To4() != nil {
		t.AgentAddress = ua.IP.String()
	}
	if kind == KindColdStart {
		t.Enterprise, t.GenericTrap = SysObjectID.String(), 0
		return
	}
	n := notificationOIDs[kind]
	t.Enterprise, t.GenericTrap, t.SpecificTrap = n[:len(n)-2].String(), 6, int(n[len(n)-1])
}

// user returns the receiver's USM user with keys localized to engineID,
// made once per setting.
func (s *Sender) user(r wnms.SNMPServer, engineID string) (*usmUser, error) {
	key := sha256.Sum256([]byte(strings.Join([]string{r.UserName, string(r.AuthenticationType), r.AuthenticationPassword,
		string(r.PrivacyProtocol), r.PrivacyPassword, engineID}, "\x00")))
	s.keysMu.Lock()
	defer s.keysMu.Unlock()
	if u, ok := s.keys[key]; ok {
		return u, nil
	}
	if r.UserName == "" {
		return nil, fmt.Errorf("an SNMPv3 receiver needs a userName")
	}
	u, err := newUSMUser(r.UserName, r.AuthenticationType, r.AuthenticationPassword, r.PrivacyProtocol, r.PrivacyPassword,
		engineID, s.Engine.Boots, 0)
	if err != nil {
		return nil, err
	}
	if len(s.keys) >= 1024 {
		clear(s.keys)
	}
	s.keys[key] = u
	return u, nil
}

// TestTrap sends wnmsTestTrap to the customer's receivers now, without
// the queue, and says what became of it at each (ErrTrapsOff when the
// policy sends no traps).
func (s *Sender) TestTrap(ctx context.Context, customerID int64, by string) ([]ReceiverResult, error) {
	t := Trap{Kind: KindTestTrap, CustomerID: customerID, Vars: []gosnmp.SnmpPDU{
		str(oidTrapMessage, "test trap sent by "+by),
	}}
	return s.deliver(ctx, t)
}

func str(o OID, s string) gosnmp.SnmpPDU {
	return gosnmp.SnmpPDU{Name: o.String(), Type: gosnmp.OctetString, Value: []byte(s)}
}

// ColdStart queues coldStart for the customer.
func (s *Sender) ColdStart(customerID int64) {
	s.Send(Trap{Kind: KindColdStart, CustomerID: customerID})
}

// APChange queues wnmsApDown or wnmsApUp.
func (s *Sender) APChange(customerID, boxID int64, name, mac, locationPath string, up bool) {
	kind := KindAPDown
	if up {
		kind = KindAPUp
	}
	s.Send(Trap{Kind: kind, CustomerID: customerID, Vars: []gosnmp.SnmpPDU{
		str(oidTrapAPName, name), str(oidTrapAPMac, mac), str(oidTrapLocation, locationPath),
		{Name: oidTrapAPBoxID.String(), Type: gosnmp.Integer, Value: int(boxID)},
	}})
}

// UpstreamChange queues wnmsUpstreamDown or wnmsUpstreamUp: a RADIUS
// upstream (kind auth or accounting) of the customer's data sources
// stopped answering, or answers again.
func (s *Sender) UpstreamChange(customerID int64, address, kind string, up bool) {
	k := KindUpstreamDown
	if up {
		k = KindUpstreamUp
	}
	s.Send(Trap{Kind: k, CustomerID: customerID, Vars: []gosnmp.SnmpPDU{
		str(oidTrapUpstream, address), str(oidTrapUpstreamKnd, kind)}})
}

// UserLocked queues wnmsUserLocked.
func (s *Sender) UserLocked(customerID int64, login string) {
	s.Send(Trap{Kind: KindUserLocked, CustomerID: customerID, Vars: []gosnmp.SnmpPDU{str(oidTrapUserLogin, login)}})
}

// Anomaly is what wnmsBaselineAnomaly says: which baseline, where, which
// slot, and the numbers that made it anomalous.
type Anomaly struct {
	CustomerID   int64
	Kind         string // the baseline: connectivity, performance, datarate
	LocationPath string
	SlotStart    time.Time
	Observation  float64
	Threshold    float64
	AP           *AnomalyAP // the AP a performance anomaly names, if any
}

// AnomalyAP is the AP an anomaly names.
type AnomalyAP struct {
	BoxID      int64
	Name       string
	MacAddress string
}

// BaselineAnomaly queues wnmsBaselineAnomaly. An anomaly that names an AP
// carries the AP's name, MAC address and boxId after the notification's
// own objects (extra variable bindings, as RFC 3416 allows).
func (s *Sender) BaselineAnomaly(a Anomaly) {
	vars := []gosnmp.SnmpPDU{
		str(oidTrapAnomalyKind, a.Kind), str(oidTrapLocation, a.LocationPath),
		str(oidTrapSlotStart, a.SlotStart.UTC().Format(time.RFC3339)),
		str(oidTrapObservation, strconv.FormatFloat(a.Observation, 'f', -1, 64)),
		str(oidTrapThreshold, strconv.FormatFloat(a.Threshold, 'f', -1, 64)),
	}
	if a.AP != nil {
		vars = append(vars, str(oidTrapAPName, a.AP.Name), str(oidTrapAPMac, a.AP.MacAddress),
			gosnmp.SnmpPDU{Name: oidTrapAPBoxID.String(), Type: gosnmp.Integer, Value: int(a.AP.BoxID)})
	}
	s.Send(Trap{Kind: KindBaselineAnomaly, CustomerID: a.CustomerID, Vars: vars})
}

// Incident is what wnmsIncidentOpened and wnmsIncidentClosed say: which
// incident, its site, when it began (or ended) and its cause and scope.
type Incident struct {
	CustomerID   int64
	ID           int64
	LocationPath string
	At           time.Time
	Cause, Scope string
}

// IncidentChange queues wnmsIncidentOpened, or wnmsIncidentClosed when
// closed.
func (s *Sender) IncidentChange(in Incident, closed bool) {
	k := KindIncidentOpened
	if closed {
		k = KindIncidentClosed
	}
	s.Send(Trap{Kind: k, CustomerID: in.CustomerID, Vars: []gosnmp.SnmpPDU{
		{Name: oidTrapIncidentID.String(), Type: gosnmp.Integer, Value: int(in.ID)},
		str(oidTrapLocation, in.LocationPath), str(oidTrapSlotStart, in.At.UTC().Format(time.RFC3339)),
		str(oidTrapIncidentCse, in.Cause), str(oidTrapIncidentScp, in.Scope),
	}})
}
