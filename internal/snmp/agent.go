package snmp

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/wnms"
)

// Limits of the agent.
const (
	// MaxMessage is the largest datagram read; anything longer is cut by
	// the kernel and fails to decode.
	MaxMessage = 65535
	// maxResponse bounds an SNMPv3 answer when the manager states no
	// smaller msgMaxSize (the largest UDP payload).
	maxResponse = 65507
	// maxCommunityResponse bounds an SNMPv1/v2c answer: those carry no
	// msgMaxSize, and their source address is not authenticated, so a small
	// GETBULK must not fetch a large answer for a forged sender. A bulk
	// answer is cut to fit; managers walk on with the next request.
	maxCommunityResponse = 8192
	// maxVarbinds is the most variable bindings a request may carry.
	maxVarbinds = 128
	// maxRepetitions caps GETBULK's max-repetitions, whatever is asked.
	maxRepetitions = 256
	// timeWindow is USM's window (RFC 3414 §3.2 step 7): a message whose
	// engine time is further from ours is not in time.
	timeWindow = 150
	// viewTTL is how long the values of a view are reused: a walk sees
	// one consistent snapshot and a burst of GETs reads the host once.
	viewTTL = time.Second
)

// Agent answers SNMP GET, GETNEXT and GETBULK on UDP with the policy of
// the server's own customer: v1/v2c with its community, v3 with its USM
// user; the MIB-II system group, IF-MIB, HOST-RESOURCES-MIB and
// WNMS-MIB's status objects, as the policy switches them. A policy change
// applies at the next Reload.
type Agent struct {
	// Policy reads the policy the agent follows.
	Policy func(ctx context.Context) (*wnms.SNMPPolicy, error)
	// Counts reads the wnmsStatus figures (nil: not served).
	Counts func(ctx context.Context) (wnms.SNMPCounts, error)
	// OpenAnomalies reads wnmsAnomaliesOpen (nil: not served).
	OpenAnomalies func(ctx context.Context) (int64, error)
	Engine        *Engine
	DataDir       string
	Description   string // sysDescr
	Log           *slog.Logger

	mu     sync.RWMutex
	cfg    *agentConfig
	policy []byte // the policy cfg was made from, as JSON

	viewMu  sync.Mutex
	view    view
	viewAt  time.Time
	viewCfg *agentConfig

	loads    loadSampler
	requests *metrics.CounterVec
}

// agentConfig is what the agent needs of a policy, ready for use.
type agentConfig struct {
	getEnabled            bool
	v12                   bool
	community             []byte
	engineID              string
	user                  *usmUser // nil: SNMPv3 queries off
	mibII, ifMIB, hostMIB bool
	sysName, sysContact   string
	sysLocation           string
}

// Request results, the label of wnms_snmp_agent_requests_total.
const (
	resAnswered           = "answered"
	resDisabled           = "disabled"
	resBadCommunity       = "bad_community"
	resUnknownUser        = "unknown_user"
	resWrongDigest        = "wrong_digest"
	resDecryptError       = "decryption_error"
	resUnknownEngine      = "unknown_engine"
	resNotInTimeWindow    = "not_in_time_window"
	resUnsupportedSec     = "unsupported_security_level"
	resMalformed          = "malformed"
	resUnsupportedPDU     = "unsupported_pdu"
	resTooBig             = "too_big"
	resUnsupportedVersion = "unsupported_version"
	resPanic              = "panic" // the decoder failed in a way it should not
)

// Instrument registers wnms_snmp_agent_requests_total{result}.
func (a *Agent) Instrument(reg *metrics.Registry) {
	a.requests = reg.Counter("wnms_snmp_agent_requests_total",
		"SNMP messages received by the agent, by what became of them.", "result")
}

func (a *Agent) count(result string) {
	if a.requests != nil {
		a.requests.Inc(result)
	}
}

// Reload reads the policy and applies it if it changed.
func (a *Agent) Reload(ctx context.Context) error {
	p, err := a.Policy(ctx)
	if err != nil {
		return err
	}
	js, err := json.Marshal(p)
	if err != nil {
		return err
	}
	a.mu.RLock()
	same := a.cfg != nil && bytes.Equal(js, a.policy)
	a.mu.RUnlock()
	if same {
		return nil
	}
	cfg, err := a.configure(p)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.cfg, a.policy = cfg, js
	a.mu.Unlock()
	return nil
}

func (a *Agent) configure(p *wnms.SNMPPolicy) (*agentConfig, error) {
	s := p.SNMPSettings
	id, err := a.Engine.engineID(s.VersionThreeSettings.EngineID)
	if err != nil {
		return nil, err
	}
	cfg := &agentConfig{
		getEnabled: s.GetEnabled,
		v12:        s.VersionOneTwoSettings.EnableGets && s.VersionOneTwoSettings.CommunityString != "",
		community:  []byte(s.VersionOneTwoSettings.CommunityString),
		engineID:   id,
		mibII:      p.SNMPMib.MibIIEnabled, ifMIB: p.SNMPMib.InterfaceMibEnabled, hostMIB: p.SNMPMib.HostResourcesMibEnabled,
		sysName: p.SNMPMib.SNMPMibII.SystemName, sysContact: p.SNMPMib.SNMPMibII.SystemContact,
		sysLocation: p.SNMPMib.SNMPMibII.SystemLocation,
	}
	if v3 := s.VersionThreeSettings; v3.EnableGets && v3.UserName != "" {
		cfg.user, err = newUSMUser(v3.UserName, v3.AuthenticationProtocol, v3.AuthenticationPassword,
			v3.PrivacyProtocol, v3.PrivacyPassword, id, a.Engine.Boots, a.Engine.Time())
		if err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

func (a *Agent) config() *agentConfig {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.cfg
}

// Serve answers the datagrams of conn until ctx ends, reloading the
// policy every reloadEvery (a change made on another replica arrives so;
// one made here is applied at once by whoever calls Reload).
func (a *Agent) Serve(ctx context.Context, conn net.PacketConn, reloadEvery time.Duration) error {
	if err := a.Reload(ctx); err != nil {
		return err
	}
	a.loads.sample(time.Now())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		reload, sample := time.NewTicker(reloadEvery), time.NewTicker(10*time.Second)
		defer reload.Stop()
		defer sample.Stop()
		for {
			select {
			case <-ctx.Done():
				conn.Close()
				return
			case <-reload.C:
				if err := a.Reload(ctx); err != nil && ctx.Err() == nil && a.Log != nil {
					a.Log.Error("SNMP agent: reading the policy failed", "err", err)
				}
			case now := <-sample.C:
				a.loads.sample(now)
			}
		}
	}()
	workers := max(2, runtime.GOMAXPROCS(0))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, MaxMessage)
			for {
				n, from, err := conn.ReadFrom(buf)
				if err != nil {
					if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
						return
					}
					continue
				}
				if out := a.Handle(buf[:n]); out != nil {
					conn.WriteTo(out, from)
				}
			}
		}()
	}
	wg.Wait()
	return nil
}

// Handle answers one message: the datagram to send back, or nil when
// none is due. It never panics on any input.
func (a *Agent) Handle(msg []byte) (out []byte) {
	defer func() {
		if recover() != nil {
			a.count(resPanic)
			out = nil
		}
	}()
	cfg := a.config()
	if cfg == nil {
		return nil
	}
	// gosnmp decodes in place (it blanks the digest), so it gets a copy.
	buf := bytes.Clone(msg)
	x := &gosnmp.GoSNMP{Version: gosnmp.Version2c}
	req, err := x.SnmpDecodePacket(buf)
	if req == nil {
		a.count(resMalformed)
		return nil
	}
	if req.Version == gosnmp.Version3 {
		return a.handleV3(cfg, msg, req)
	}
	if err != nil {
		a.count(resMalformed)
		return nil
	}
	if req.Version != gosnmp.Version1 && req.Version != gosnmp.Version2c {
		a.count(resUnsupportedVersion)
		return nil
	}
	if !cfg.getEnabled || !cfg.v12 {
		a.count(resDisabled)
		return nil
	}
	if subtle.ConstantTimeCompare([]byte(req.Community), cfg.community) != 1 {
		a.count(resBadCommunity)
		return nil
	}
	resp := &gosnmp.SnmpPacket{Version: req.Version, Community: req.Community, PDUType: gosnmp.GetResponse, RequestID: req.RequestID}
	if !a.answer(cfg, req, resp, maxCommunityResponse) {
		return nil
	}
	out, err = resp.MarshalMsg()
	if err != nil {
		a.count(resMalformed)
		return nil
	}
	a.count(resAnswered)
	return out
}

// handleV3 follows RFC 3414 §3.2 for a message to this engine: discovery
// and time synchronisation get their reports; a message that is not
// authentic, or for another user, gets nothing.
func (a *Agent) handleV3(cfg *agentConfig, msg []byte, head *gosnmp.SnmpPacket) []byte {
	usm, ok := head.SecurityParameters.(*gosnmp.UsmSecurityParameters)
	if !ok || head.SecurityModel != gosnmp.UserSecurityModel {
		a.count(resMalformed)
		return nil
	}
	if !cfg.getEnabled {
		a.count(resDisabled)
		return nil
	}
	boots, now := a.Engine.Boots, a.Engine.Time()
	level := head.MsgFlags & gosnmp.AuthPriv
	reportable := head.MsgFlags&gosnmp.Reportable != 0
	if usm.AuthoritativeEngineID != cfg.engineID {
		// Discovery (RFC 3414 §4): the manager learns our engine id.
		a.count(resUnknownEngine)
		if !reportable {
			return nil
		}
		return a.report(cfg, head, nil, oidUnknownEngineIDs, boots, now)
	}
	u := cfg.user
	if u == nil || usm.UserName != u.params.UserName {
		a.count(resUnknownUser)
		return nil
	}
	if level > u.level || (u.level != gosnmp.NoAuthNoPriv && level == gosnmp.NoAuthNoPriv) {
		a.count(resUnsupportedSec)
		if !reportable {
			return nil
		}
		return a.report(cfg, head, nil, oidUnsupportedLevel, boots, now)
	}
	// Authenticate and decrypt with the user's localized keys.
	x := &gosnmp.GoSNMP{Version: gosnmp.Version3, SecurityModel: gosnmp.UserSecurityModel, MsgFlags: head.MsgFlags,
		SecurityParameters: u.copyFor(boots, now)}
	req, err := x.UnmarshalTrap(bytes.Clone(msg), true)
	if err != nil || req == nil {
		if a.Log != nil && err != nil {
			a.Log.Debug("SNMPv3 message refused", "err", err)
		}
		// A digest that does not match, or security parameters that do
		// not fit the user's protocols (a digest of another length), fail
		// authentication; anything after it is a failed decryption.
		if err != nil && (strings.Contains(err.Error(), "not authentic") || strings.Contains(err.Error(), "Security Model")) {
			a.count(resWrongDigest)
		} else {
			a.count(resDecryptError)
		}
		return nil
	}
	rusm := req.SecurityParameters.(*gosnmp.UsmSecurityParameters)
	if level != gosnmp.NoAuthNoPriv {
		// The time window (RFC 3414 §3.2 step 7), after authentication.
		d := int64(rusm.AuthoritativeEngineTime) - int64(now)
		if rusm.AuthoritativeEngineBoots != boots || d > timeWindow || d < -timeWindow {
			a.count(resNotInTimeWindow)
			return a.report(cfg, req, u, oidNotInTimeWindows, boots, now)
		}
	}
	limit := maxResponse
	if req.MsgMaxSize >= 484 && int(req.MsgMaxSize) < limit {
		limit = int(req.MsgMaxSize)
	}
	resp := a.v3Packet(cfg, req, u, level, boots, now)
	resp.PDUType = gosnmp.GetResponse
	if !a.answer(cfg, req, resp, limit) {
		return nil
	}
	out, err := a.marshalV3(resp, u)
	if err != nil {
		a.count(resMalformed)
		return nil
	}
	a.count(resAnswered)
	return out
}

// v3Packet starts the answer to req: same message id and context, our
// engine as the authoritative one.
func (a *Agent) v3Packet(cfg *agentConfig, req *gosnmp.SnmpPacket, u *usmUser, level gosnmp.SnmpV3MsgFlags, boots, now uint32) *gosnmp.SnmpPacket {
	var sp *gosnmp.UsmSecurityParameters
	if u != nil {
		sp = u.copyFor(boots, now)
	} else {
		sp = &gosnmp.UsmSecurityParameters{AuthoritativeEngineID: cfg.engineID, AuthoritativeEngineBoots: boots,
			AuthoritativeEngineTime: now}
		if rusm, ok := req.SecurityParameters.(*gosnmp.UsmSecurityParameters); ok {
			sp.UserName = rusm.UserName
		}
	}
	ctxEngine := req.ContextEngineID
	if ctxEngine == "" {
		ctxEngine = cfg.engineID
	}
	return &gosnmp.SnmpPacket{Version: gosnmp.Version3, MsgFlags: level, SecurityModel: gosnmp.UserSecurityModel,
		SecurityParameters: sp, MsgID: req.MsgID, MsgMaxSize: maxResponse, ContextEngineID: ctxEngine,
		ContextName: req.ContextName, RequestID: req.RequestID}
}

// report answers req with a Report PDU carrying the USM counter that
// says why (RFC 3414 §3.2): unauthenticated, or authenticated with the
// user's keys when u is given (a time-window report must be, so that the
// manager trusts the time in it).
func (a *Agent) report(cfg *agentConfig, req *gosnmp.SnmpPacket, u *usmUser, counter OID, boots, now uint32) []byte {
	level := gosnmp.NoAuthNoPriv
	if u != nil {
		level = gosnmp.AuthNoPriv
	}
	p := a.v3Packet(cfg, req, u, level, boots, now)
	p.PDUType = gosnmp.Report
	p.Variables = []gosnmp.SnmpPDU{{Name: counter.String(), Type: gosnmp.Counter32, Value: uint(1)}}
	out, err := a.marshalV3(p, u)
	if err != nil {
		return nil
	}
	return out
}

func (a *Agent) marshalV3(p *gosnmp.SnmpPacket, u *usmUser) ([]byte, error) {
	if u != nil && p.MsgFlags&gosnmp.AuthPriv == gosnmp.AuthPriv {
		if err := u.params.InitPacket(p); err != nil {
			return nil, err
		}
	}
	return p.MarshalMsg()
}

// answer fills resp with the answer to req's PDU from the current view;
// false when no answer is due (a PDU an agent does not answer).
func (a *Agent) answer(cfg *agentConfig, req, resp *gosnmp.SnmpPacket, limit int) bool {
	v1 := req.Version == gosnmp.Version1
	if len(req.Variables) > maxVarbinds {
		resp.Error, resp.Variables = gosnmp.TooBig, nil
		a.count(resTooBig)
		return true
	}
	v := a.currentView(cfg)
	switch req.PDUType {
	case gosnmp.GetRequest:
		for i, vb := range req.Variables {
			o, err := ParseOID(vb.Name)
			e, ok := v.get(o)
			if err == nil && ok && !(v1 && e.pdu.Type == gosnmp.Counter64) {
				resp.Variables = append(resp.Variables, e.pdu)
				continue
			}
			if v1 {
				return v1Error(req, resp, gosnmp.NoSuchName, i)
			}
			t := gosnmp.NoSuchObject
			if err == nil && len(o) > 1 {
				if n, ok := v.next(o[:len(o)-1], false); ok && n.oid.HasPrefix(o[:len(o)-1]) {
					t = gosnmp.NoSuchInstance
				}
			}
			resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: vb.Name, Type: t})
		}
	case gosnmp.GetNextRequest:
		for i, vb := range req.Variables {
			o, err := ParseOID(vb.Name)
			e, ok := v.next(o, v1)
			if err == nil && ok {
				resp.Variables = append(resp.Variables, e.pdu)
				continue
			}
			if v1 {
				return v1Error(req, resp, gosnmp.NoSuchName, i)
			}
			resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: vb.Name, Type: gosnmp.EndOfMibView})
		}
	case gosnmp.GetBulkRequest:
		if v1 {
			a.count(resUnsupportedPDU)
			return false
		}
		a.bulk(v, req, resp, limit)
	case gosnmp.SetRequest:
		if v1 {
			return v1Error(req, resp, gosnmp.NoSuchName, 0)
		}
		resp.Variables, resp.Error, resp.ErrorIndex = req.Variables, gosnmp.NotWritable, 1
	default:
		a.count(resUnsupportedPDU)
		return false
	}
	if size(resp) > limit {
		resp.Variables, resp.Error, resp.ErrorIndex = nil, gosnmp.TooBig, 0
		a.count(resTooBig)
	}
	return true
}

func v1Error(req, resp *gosnmp.SnmpPacket, status gosnmp.SNMPError, i int) bool {
	resp.Variables, resp.Error, resp.ErrorIndex = req.Variables, status, uint8(min(i+1, 255))
	return true
}

// bulk answers GETBULK (RFC 3416 §4.2.3): the non-repeaters once, then
// the repeaters up to max-repetitions times or until each is at the end
// of the view, cut to what fits in limit.
func (a *Agent) bulk(v view, req, resp *gosnmp.SnmpPacket, limit int) {
	n := min(int(req.NonRepeaters), len(req.Variables))
	m := min(int(req.MaxRepetitions), maxRepetitions)
	next := func(name string) gosnmp.SnmpPDU {
		o, err := ParseOID(name)
		if e, ok := v.next(o, false); err == nil && ok {
			return e.pdu
		}
		return gosnmp.SnmpPDU{Name: name, Type: gosnmp.EndOfMibView}
	}
	for _, vb := range req.Variables[:n] {
		resp.Variables = append(resp.Variables, next(vb.Name))
	}
	last := make([]string, 0, len(req.Variables)-n)
	for _, vb := range req.Variables[n:] {
		last = append(last, vb.Name)
	}
	// Each varbind costs at least its OID and value; stop adding rows
	// once the answer would exceed the limit.
	budget := limit - 64 - size(resp)
	for r := 0; r < m && len(last) > 0; r++ {
		allEnd := true
		row := make([]gosnmp.SnmpPDU, len(last))
		cost := 0
		for i, name := range last {
			row[i] = next(name)
			last[i] = row[i].Name
			if row[i].Type != gosnmp.EndOfMibView {
				allEnd = false
			}
			cost += varbindSize(row[i])
		}
		if cost > budget && r > 0 {
			break
		}
		budget -= cost
		resp.Variables = append(resp.Variables, row...)
		if allEnd {
			break
		}
	}
}

// size is the encoded length of a packet's varbinds, near enough to
// keep an answer under a size limit.
func size(p *gosnmp.SnmpPacket) int {
	n := 0
	for _, vb := range p.Variables {
		n += varbindSize(vb)
	}
	return n
}

func varbindSize(vb gosnmp.SnmpPDU) int {
	n := 8 + len(vb.Name)/2 + 12 // sequence, OID (an arc is about two characters), scalar value
	switch v := vb.Value.(type) {
	case []byte:
		n += len(v)
	case string:
		n += len(v)
	}
	return n
}

// currentView returns the view for cfg, rebuilt at most once per viewTTL
// and whenever the policy changed.
func (a *Agent) currentView(cfg *agentConfig) view {
	a.viewMu.Lock()
	defer a.viewMu.Unlock()
	now := time.Now()
	if a.viewCfg == cfg && now.Sub(a.viewAt) < viewTTL {
		return a.view
	}
	f := facts{mibII: cfg.mibII, ifMIB: cfg.ifMIB, hostMIB: cfg.hostMIB, sysName: cfg.sysName,
		sysContact: cfg.sysContact, sysLocation: cfg.sysLocation, sysDescr: a.Description,
		agentUp: now.Sub(a.Engine.Start), dataDir: a.DataDir, loads: a.loads.loads()}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if a.Counts != nil {
		if c, err := a.Counts(ctx); err == nil {
			f.counts = &c
		} else if a.Log != nil {
			a.Log.Error("SNMP agent: reading the counts failed", "err", err)
		}
	}
	if a.OpenAnomalies != nil {
		if n, err := a.OpenAnomalies(ctx); err == nil {
			f.openAnomalies = &n
		}
	}
	a.view, a.viewAt, a.viewCfg = buildView(f), now, cfg
	return a.view
}
