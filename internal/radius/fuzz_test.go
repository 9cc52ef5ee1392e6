package radius

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"
)

// fuzzSecret signs the seeds, so the fuzzer starts from packets that
// verify and mutates its way past the checks.
const fuzzSecret = "fuzz-secret"

// seedPackets are encoded packets of each kind the listeners take or get
// from upstreams.
func seedPackets(t testing.TB) map[string][]byte {
	secret := []byte(fuzzSecret)
	seeds := map[string][]byte{}
	req := rad.New(rad.CodeAccessRequest, secret)
	rfc2865.UserName_SetString(req, "alice")
	rfc2865.UserPassword_SetString(req, "alice-pw")
	rfc2865.CallingStationID_SetString(req, "02-00-00-00-00-01")
	rfc2865.CalledStationID_SetString(req, "AA-BB-CC-DD-EE-FF:corp")
	rfc2865.ProxyState_Add(req, []byte("nas"))
	w, err := encodeAccessRequest(req, secret)
	if err != nil {
		t.Fatal(err)
	}
	seeds["pap"] = w
	// The same without Message-Authenticator, and one that carries this
	// process's own Proxy-State (a loop).
	unsigned := rad.New(rad.CodeAccessRequest, secret)
	unsigned.Attributes = cloneAttributes(req.Attributes)
	if seeds["pap-unsigned"], err = unsigned.Encode(); err != nil {
		t.Fatal(err)
	}
	looped := rad.New(rad.CodeAccessRequest, secret)
	looped.Attributes = cloneAttributes(req.Attributes)
	looped.Add(attrProxyState, rad.Attribute(ownProxyState([16]byte{7})))
	if seeds["looped"], err = encodeAccessRequest(looped, secret); err != nil {
		t.Fatal(err)
	}
	eap := rad.New(rad.CodeAccessRequest, secret)
	eap.Add(attrEAPMessage, rad.Attribute{2, 7, 0, 6, eapTLS, 0})
	eap.Add(attrState, rad.Attribute("state"))
	if seeds["eap"], err = encodeAccessRequest(eap, secret); err != nil {
		t.Fatal(err)
	}
	acct := rad.New(rad.CodeAccountingRequest, secret)
	rfc2866.AcctStatusType_Set(acct, rfc2866.AcctStatusType_Value_InterimUpdate)
	rfc2866.AcctSessionID_SetString(acct, "s")
	rfc2865.CallingStationID_SetString(acct, "02-00-00-00-00-01")
	rfc2866.AcctInputOctets_Set(acct, 10)
	rfc2869.AcctInputGigawords_Set(acct, 1)
	rfc2866.AcctOutputOctets_Set(acct, 20)
	rfc2869.EventTimestamp_Set(acct, time.Unix(1764000000, 0))
	if seeds["acct"], err = acct.Encode(); err != nil {
		t.Fatal(err)
	}
	acc := &rad.Packet{Code: rad.CodeAccessAccept}
	key, _ := rad.NewTunnelPassword(make([]byte, 32), []byte{0x80, 1}, secret, w[4:20])
	vsa := append([]byte{0, 0, 1, 55, msMPPERecvKey, byte(len(key) + 2)}, key...)
	acc.Add(attrVendorSpecific, vsa)
	acc.Add(attrProxyState, rad.Attribute(ownProxyState([16]byte{})))
	var auth [16]byte
	copy(auth[:], w[4:20])
	if seeds["accept"], err = encodeResponse(acc, auth, secret, true); err != nil {
		t.Fatal(err)
	}
	return seeds
}

// TestWriteFuzzSeeds writes the seeds under testdata/fuzz when
// WNMS_WRITE_FUZZ_SEEDS=1; they are committed.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("WNMS_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set WNMS_WRITE_FUZZ_SEEDS=1 to write the seeds")
	}
	for name, b := range seedPackets(t) {
		for _, target := range []string{"FuzzDecodeRequest", "FuzzRelayResponse"} {
			dir := filepath.Join("testdata", "fuzz", target)
			os.MkdirAll(dir, 0o755)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FuzzDecodeRequest feeds any datagram to the checks and decoding both
// listeners run on what sources send, and to what reads the decoded
// packet. Nothing may panic, and what passes must verify.
func FuzzDecodeRequest(f *testing.F) {
	for _, b := range seedPackets(f) {
		f.Add(b)
	}
	secret := []byte(fuzzSecret)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, tc := range []struct {
			code      rad.Code
			requireMA bool
		}{{rad.CodeAccessRequest, false}, {rad.CodeAccessRequest, true}, {rad.CodeAccountingRequest, false}} {
			code := tc.code
			p, wire, _, ok := decodeRequest(b, secret, code, tc.requireMA)
			if !ok {
				continue
			}
			if present, ok := checkMessageAuthenticator(wire, p.Authenticator, secret); tc.requireMA && (!present || !ok) {
				t.Fatal("accepted an access request without a valid Message-Authenticator")
			}
			carriesOwnProxyState(p)
			if len(wire) > rad.MaxPacketLength || len(wire) < 20 {
				t.Fatalf("accepted %d octets", len(wire))
			}
			if code == rad.CodeAccountingRequest && !rad.IsAuthenticRequest(wire, secret) {
				t.Fatal("accepted an accounting request that does not verify")
			}
			subjectOf(p)
			eapType(p)
			conversationKey("s", p)
			if code == rad.CodeAccessRequest {
				out := &rad.Packet{Code: p.Code, Secret: p.Secret, Authenticator: p.Authenticator,
					Attributes: cloneAttributes(p.Attributes)}
				if reencryptRequest(out, []byte("up"), randomAuthenticator()) == nil {
					encodeAccessRequest(out, []byte("up"))
				}
			} else {
				a := NewAccounting(&Settings{}, nil, AccountingOptions{MaxSessions: 2, MaxRecent: 2})
				a.observe(&source{Source: Source{Name: "s"}, secret: secret}, p, time.Unix(1764000000, 0))
			}
		}
	})
}

// FuzzRelayResponse feeds any datagram, as if an upstream's verified
// answer, to what the proxy does to relay it: decode, strip its
// Proxy-State, re-encrypt keys for the NAS, sign. Nothing may panic, and
// what it signs must verify.
func FuzzRelayResponse(f *testing.F) {
	for _, b := range seedPackets(f) {
		f.Add(b)
	}
	secret := []byte(fuzzSecret)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 20 || len(b) > rad.MaxPacketLength {
			return
		}
		checkMessageAuthenticator(b, [16]byte{}, secret)
		isAuthenticResponse(b, [16]byte{}, secret, true)
		resp, err := rad.Parse(b, secret)
		if err != nil {
			return
		}
		var upAuth [16]byte
		copy(upAuth[:], b[4:20])
		stripProxyState(resp)
		eapType(resp)
		if reencryptResponse(resp, secret, upAuth, []byte("nas"), [16]byte{1}) != nil {
			return
		}
		wire, err := encodeResponse(resp, [16]byte{1}, []byte("nas"), true)
		if err != nil {
			return
		}
		if !isAuthenticResponse(wire, [16]byte{1}, []byte("nas"), true) {
			t.Fatal("a relayed answer does not verify")
		}
	})
}
