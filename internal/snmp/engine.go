package snmp

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// Engine is this server's SNMP engine: its boots (counted up at every
// start and kept in the store) and the time it started. Both the agent
// (as the authoritative engine of requests) and the trap sender (as the
// authoritative engine of SNMPv3 traps) use it.
type Engine struct {
	Boots uint32
	Start time.Time
	// DefaultID is the engine id used while the policy sets none.
	DefaultID string
	Now       func() time.Time
}

// NewEngine returns the engine of a server started now for the boots-th
// time; its default id derives from secret, so it stays the same across
// restarts: RFC 3411's format 0x80 | enterprise number, 5 (octets), then
// eight octets of a hash of the secret.
func NewEngine(boots uint32, secret []byte) *Engine {
	sum := sha256.Sum256(append([]byte("wnms snmp engine id\x00"), secret...))
	id := make([]byte, 5, 13)
	binary.BigEndian.PutUint32(id, 0x80000000|Enterprise[len(Enterprise)-1])
	id[4] = 5
	id = append(id, sum[:8]...)
	return &Engine{Boots: boots, Start: time.Now(), DefaultID: string(id), Now: time.Now}
}

// Time is snmpEngineTime: whole seconds since the start.
func (e *Engine) Time() uint32 { return uint32(e.Now().Sub(e.Start) / time.Second) }

// engineID is the engine id a policy names (hex, as stored), or the
// default when it names none.
func (e *Engine) engineID(policyHex string) (string, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(policyHex), "0x"), "0X")
	if h == "" {
		return e.DefaultID, nil
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return "", fmt.Errorf("engineId %q is not hex", policyHex)
	}
	return string(b), nil
}
