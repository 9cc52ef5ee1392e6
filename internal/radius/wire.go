package radius

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"encoding/binary"

	rad "layeh.com/radius"
)

// Attribute types used here (RFC 2865, 2866, 2868, 2869, 3579).
const (
	attrUserName             rad.Type = 1
	attrUserPassword         rad.Type = 2
	attrCHAPPassword         rad.Type = 3
	attrNASIPAddress         rad.Type = 4
	attrFramedIPAddress      rad.Type = 8
	attrState                rad.Type = 24
	attrVendorSpecific       rad.Type = 26
	attrCalledStationID      rad.Type = 30
	attrCallingStationID     rad.Type = 31
	attrNASIdentifier        rad.Type = 32
	attrProxyState           rad.Type = 33
	attrAcctStatusType       rad.Type = 40
	attrAcctDelayTime        rad.Type = 41
	attrAcctInputOctets      rad.Type = 42
	attrAcctOutputOctets     rad.Type = 43
	attrAcctSessionID        rad.Type = 44
	attrAcctTerminateCause   rad.Type = 49
	attrAcctInputGigawords   rad.Type = 52
	attrAcctOutputGigawords  rad.Type = 53
	attrEventTimestamp       rad.Type = 55
	attrCHAPChallenge        rad.Type = 60
	attrTunnelPassword       rad.Type = 69
	attrEAPMessage           rad.Type = 79
	attrMessageAuthenticator rad.Type = 80
)

// Microsoft vendor attributes that are encrypted with the secret and the
// request authenticator (RFC 2548): the keys an AP derives its Wi-Fi keys
// from after EAP.
const (
	vendorMicrosoft = 311
	msMPPESendKey   = 16
	msMPPERecvKey   = 17
)

// DropReason says why a packet was dropped. Every drop is silent on the
// wire, as RADIUS servers do, and counted.
type DropReason int

// The reasons a packet is dropped.
const (
	DropUnknownSource            DropReason = iota // from an address no source holds
	DropOversize                                   // longer than 4096 bytes
	DropMalformed                                  // not a RADIUS packet: short, bad lengths or attributes
	DropUnexpectedCode                             // a code this listener does not take
	DropBadAuthenticator                           // the Request Authenticator does not verify (accounting)
	DropBadMessageAuthenticator                    // Message-Authenticator wrong
	DropDuplicate                                  // a retransmission of a request still being answered
	DropBusy                                       // too many requests in flight in all
	DropUpstreamUnexpected                         // an upstream answer that matches no request
	DropUpstreamBadAuthenticator                   // an upstream answer whose authenticators do not verify
	DropNoMessageAuthenticator                     // an Access-Request without Message-Authenticator, from a source that requires one (or with EAP-Message)
	DropLoop                                       // a request carrying this wnms's own Proxy-State: it went round a loop
	DropBusySource                                 // too many requests of its source in flight
	DropBusyCustomer                               // too many requests of its source's customer (group) in flight
	dropReasons
)

var dropNames = [dropReasons]string{"unknown_source", "oversize", "malformed", "unexpected_code",
	"bad_authenticator", "bad_message_authenticator", "duplicate", "busy", "upstream_unexpected",
	"upstream_bad_authenticator", "no_message_authenticator", "loop", "busy_source", "busy_customer"}

// String is the reason as /metrics labels it.
func (r DropReason) String() string {
	if r < 0 || r >= dropReasons {
		return "unknown"
	}
	return dropNames[r]
}

// DropReasons lists every DropReason, for /metrics to show zeros too.
func DropReasons() []DropReason {
	out := make([]DropReason, dropReasons)
	for i := range out {
		out[i] = DropReason(i)
	}
	return out
}

// decodeRequest checks one received request datagram against the
// source's secret and decodes it. want is the only code accepted. For an
// Accounting-Request the Request Authenticator is verified (RFC 2866);
// for an Access-Request the Message-Authenticator is verified when
// present, and required when requireMA or beside EAP-Message (RFC 3579
// §3.2). It never panics, whatever b holds.
func decodeRequest(b, secret []byte, want rad.Code, requireMA bool) (*rad.Packet, []byte, DropReason, bool) {
	if len(b) > rad.MaxPacketLength {
		return nil, nil, DropOversize, false
	}
	if len(b) < 20 {
		return nil, nil, DropMalformed, false
	}
	n := int(binary.BigEndian.Uint16(b[2:4]))
	if n < 20 || n > len(b) {
		return nil, nil, DropMalformed, false
	}
	// Octets past the length field are padding (RFC 2865 §3).
	wire := b[:n]
	if rad.Code(wire[0]) != want {
		return nil, nil, DropUnexpectedCode, false
	}
	p, err := rad.Parse(wire, secret)
	if err != nil {
		return nil, nil, DropMalformed, false
	}
	switch want {
	case rad.CodeAccountingRequest:
		if !rad.IsAuthenticRequest(wire, secret) {
			return nil, nil, DropBadAuthenticator, false
		}
	case rad.CodeAccessRequest:
		// User-Password is 16 to 128 octets in blocks of 16 (RFC 2865
		// §5.2): anything else could not be decrypted to pass it on.
		if pw, ok := p.Lookup(attrUserPassword); ok && (len(pw) < 16 || len(pw) > 128 || len(pw)%16 != 0) {
			return nil, nil, DropMalformed, false
		}
	}
	// An Accounting-Request's Message-Authenticator is computed with its
	// authenticator field zeroed, as its Request Authenticator is (RFC
	// 5080 §2.2.2 and what FreeRADIUS does); an Access-Request's with its
	// random Request Authenticator.
	auth := p.Authenticator
	if want == rad.CodeAccountingRequest {
		auth = [16]byte{}
	}
	present, ok := checkMessageAuthenticator(wire, auth, secret)
	if !ok {
		return nil, nil, DropBadMessageAuthenticator, false
	}
	if !present && want == rad.CodeAccessRequest && (requireMA || hasAttr(p, attrEAPMessage)) {
		return nil, nil, DropNoMessageAuthenticator, false
	}
	return p, wire, 0, true
}

func hasAttr(p *rad.Packet, t rad.Type) bool {
	_, ok := p.Lookup(t)
	return ok
}

// checkMessageAuthenticator verifies wire's Message-Authenticator, if it
// has one, as HMAC-MD5 under secret over the packet with auth in the
// authenticator field and the attribute's value zeroed (RFC 3579 §3.2:
// for a request auth is its own Request Authenticator; for a response it
// is the Request Authenticator of the request answered). More than one
// Message-Authenticator, or one not 16 octets long, is wrong.
func checkMessageAuthenticator(wire []byte, auth [16]byte, secret []byte) (present, ok bool) {
	at := -1
	for i := 20; i+2 <= len(wire); {
		l := int(wire[i+1])
		if l < 2 || i+l > len(wire) {
			return false, false
		}
		if rad.Type(wire[i]) == attrMessageAuthenticator {
			if at >= 0 || l != 18 {
				return true, false
			}
			at = i + 2
		}
		i += l
	}
	if at < 0 {
		return false, true
	}
	c := bytes.Clone(wire)
	copy(c[4:20], auth[:])
	clear(c[at : at+16])
	mac := hmac.New(md5.New, secret)
	mac.Write(c)
	return true, hmac.Equal(mac.Sum(nil), wire[at:at+16])
}

// setMessageAuthenticator computes the Message-Authenticator of an
// encoded packet whose authenticator field holds what RFC 3579 asks for
// (see checkMessageAuthenticator) and whose Message-Authenticator, if
// any, is zero, and writes it in.
func setMessageAuthenticator(wire []byte, secret []byte) {
	for i := 20; i+2 <= len(wire); i += int(wire[i+1]) {
		if wire[i+1] < 2 {
			return
		}
		if rad.Type(wire[i]) == attrMessageAuthenticator && wire[i+1] == 18 {
			mac := hmac.New(md5.New, secret)
			mac.Write(wire)
			mac.Sum(wire[i+2 : i+2])
			return
		}
	}
}

// withMessageAuthenticator removes p's Message-Authenticators and puts a
// zeroed one first, where draft-ietf-radext-deprecating-radius wants it.
func withMessageAuthenticator(p *rad.Packet) {
	p.Del(attrMessageAuthenticator)
	p.Attributes = append(rad.Attributes{{Type: attrMessageAuthenticator, Attribute: make(rad.Attribute, 16)}}, p.Attributes...)
}

// encodeAccessRequest encodes p, an Access-Request with a fresh
// Request Authenticator, signed with a Message-Authenticator under
// secret.
func encodeAccessRequest(p *rad.Packet, secret []byte) ([]byte, error) {
	withMessageAuthenticator(p)
	wire, err := p.MarshalBinary()
	if err != nil {
		return nil, err
	}
	setMessageAuthenticator(wire, secret)
	return wire, nil
}

// encodeResponse encodes p as the answer to a request whose Request
// Authenticator was reqAuth, signed under secret: Message-Authenticator
// (when withMA) first, then the Response Authenticator over it all.
func encodeResponse(p *rad.Packet, reqAuth [16]byte, secret []byte, withMA bool) ([]byte, error) {
	p.Authenticator = reqAuth
	if withMA {
		withMessageAuthenticator(p)
	} else {
		p.Del(attrMessageAuthenticator)
	}
	wire, err := p.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if withMA {
		setMessageAuthenticator(wire, secret)
	}
	h := md5.New()
	h.Write(wire)
	h.Write(secret)
	h.Sum(wire[4:4])
	return wire, nil
}

// isAuthenticResponse verifies an upstream's answer to a request sent
// with Request Authenticator reqAuth: the Response Authenticator, and the
// Message-Authenticator when present (required when requireMA).
func isAuthenticResponse(wire []byte, reqAuth [16]byte, secret []byte, requireMA bool) bool {
	if len(wire) < 20 {
		return false
	}
	h := md5.New()
	h.Write(wire[:4])
	h.Write(reqAuth[:])
	h.Write(wire[20:])
	h.Write(secret)
	if !hmac.Equal(h.Sum(nil), wire[4:20]) {
		return false
	}
	present, ok := checkMessageAuthenticator(wire, reqAuth, secret)
	return ok && (present || !requireMA)
}

func randomAuthenticator() (a [16]byte) {
	if _, err := rand.Read(a[:]); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	return a
}

// reencryptRequest moves p's secret-dependent attributes from (secret,
// p.Authenticator) to (to, auth): User-Password is decrypted and
// encrypted again; CHAP keeps its challenge by naming the old
// authenticator in CHAP-Challenge (RFC 2865 §2.2).
func reencryptRequest(p *rad.Packet, to []byte, auth [16]byte) error {
	if v, ok := p.Lookup(attrUserPassword); ok {
		plain, err := rad.UserPassword(v, p.Secret, p.Authenticator[:])
		if err != nil {
			return err
		}
		enc, err := rad.NewUserPassword(plain, to, auth[:])
		if err != nil {
			return err
		}
		p.Set(attrUserPassword, enc)
	}
	if hasAttr(p, attrCHAPPassword) && !hasAttr(p, attrCHAPChallenge) {
		p.Add(attrCHAPChallenge, append(rad.Attribute(nil), p.Authenticator[:]...))
	}
	p.Authenticator, p.Secret = auth, to
	return nil
}

// reencryptResponse moves a response's salt-encrypted attributes
// (Tunnel-Password, MS-MPPE-Send-Key and -Recv-Key) from the upstream's
// (secret, request authenticator) to the NAS's.
func reencryptResponse(p *rad.Packet, fromSecret []byte, fromAuth [16]byte, toSecret []byte, toAuth [16]byte) error {
	move := func(v rad.Attribute) (rad.Attribute, error) {
		plain, salt, err := rad.TunnelPassword(v, fromSecret, fromAuth[:])
		if err != nil {
			return nil, err
		}
		return rad.NewTunnelPassword(plain, salt, toSecret, toAuth[:])
	}
	for _, avp := range p.Attributes {
		switch avp.Type {
		case attrTunnelPassword:
			if len(avp.Attribute) < 1 {
				continue
			}
			v, err := move(avp.Attribute[1:])
			if err != nil {
				return err
			}
			avp.Attribute = append(rad.Attribute{avp.Attribute[0]}, v...)
		case attrVendorSpecific:
			a := avp.Attribute
			if len(a) < 6 || binary.BigEndian.Uint32(a) != vendorMicrosoft {
				continue
			}
			// One VSA may hold several sub-attributes (RFC 2865 §5.26).
			out := append(rad.Attribute(nil), a[:4]...)
			for s := a[4:]; len(s) > 0; {
				if len(s) < 2 || int(s[1]) < 2 || int(s[1]) > len(s) {
					return errMalformedVSA
				}
				typ, val := s[0], s[2:s[1]]
				if typ == msMPPESendKey || typ == msMPPERecvKey {
					v, err := move(val)
					if err != nil {
						return err
					}
					val = v
				}
				out = append(out, typ, byte(len(val)+2))
				out = append(out, val...)
				s = s[s[1]:]
			}
			if len(out) > 253 {
				return errMalformedVSA
			}
			avp.Attribute = out
		}
	}
	return nil
}

type wireError string

func (e wireError) Error() string { return string(e) }

const errMalformedVSA = wireError("radius: malformed vendor-specific attribute")
