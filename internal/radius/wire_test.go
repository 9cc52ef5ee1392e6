package radius

import (
	"bytes"
	"testing"

	rad "layeh.com/radius"
)

// The salt-encrypted attributes of an answer decrypt for the NAS to what
// the upstream encrypted: Tunnel-Password keeps its tag, MS-MPPE keys
// their place among the vendor's sub-attributes.
func TestReencryptResponse(t *testing.T) {
	upSecret, nasSecret := []byte("up"), []byte("nas")
	upAuth, nasAuth := randomAuthenticator(), randomAuthenticator()
	key := bytes.Repeat([]byte{0xab}, 32)
	enc := func(v []byte, salt byte) rad.Attribute {
		a, err := rad.NewTunnelPassword(v, []byte{0x80, salt}, upSecret, upAuth[:])
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	send, recv := enc(key, 1), enc(key[:16], 2)
	vsa := []byte{0, 0, 1, 55, 7, 6, 1, 2, 3, 4} // an unencrypted sub-attribute first
	vsa = append(vsa, msMPPESendKey, byte(len(send)+2))
	vsa = append(vsa, send...)
	p := &rad.Packet{Code: rad.CodeAccessAccept}
	p.Add(attrVendorSpecific, vsa)
	p.Add(attrVendorSpecific, append([]byte{0, 0, 1, 55, msMPPERecvKey, byte(len(recv) + 2)}, recv...))
	p.Add(attrTunnelPassword, append(rad.Attribute{3}, enc([]byte("tunnel"), 3)...))
	if err := reencryptResponse(p, upSecret, upAuth, nasSecret, nasAuth); err != nil {
		t.Fatal(err)
	}
	dec := func(a []byte) []byte {
		v, _, err := rad.TunnelPassword(a, nasSecret, nasAuth[:])
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v0 := p.Attributes[0].Attribute
	if !bytes.Equal(v0[:10], vsa[:10]) || !bytes.Equal(dec(v0[12:]), key) {
		t.Errorf("MS-MPPE-Send-Key not carried over")
	}
	if v1 := p.Attributes[1].Attribute; !bytes.Equal(dec(v1[6:]), key[:16]) {
		t.Errorf("MS-MPPE-Recv-Key not carried over")
	}
	if v2 := p.Attributes[2].Attribute; v2[0] != 3 || string(dec(v2[1:])) != "tunnel" {
		t.Errorf("Tunnel-Password not carried over")
	}
	// A broken sub-attribute fails the answer rather than pass on garbage.
	bad := &rad.Packet{Code: rad.CodeAccessAccept}
	bad.Add(attrVendorSpecific, rad.Attribute{0, 0, 1, 55, msMPPESendKey, 40, 1})
	if reencryptResponse(bad, upSecret, upAuth, nasSecret, nasAuth) == nil {
		t.Error("a malformed vendor attribute was accepted")
	}
}

// Message-Authenticator as RFC 3579 computes it: a request under its own
// authenticator, an answer under the request's.
func TestMessageAuthenticator(t *testing.T) {
	secret := []byte("s")
	req := rad.New(rad.CodeAccessRequest, secret)
	req.Add(attrEAPMessage, rad.Attribute{2, 0, 0, 5, 1})
	wire, err := encodeAccessRequest(req, secret)
	if err != nil {
		t.Fatal(err)
	}
	if present, ok := checkMessageAuthenticator(wire, req.Authenticator, secret); !present || !ok {
		t.Fatal("request: does not verify")
	}
	if _, ok := checkMessageAuthenticator(wire, req.Authenticator, []byte("other")); ok {
		t.Fatal("request: verifies under another secret")
	}
	resp := &rad.Packet{Code: rad.CodeAccessChallenge}
	resp.Add(attrState, rad.Attribute("x"))
	out, err := encodeResponse(resp, req.Authenticator, secret, true)
	if err != nil {
		t.Fatal(err)
	}
	if out[20] != byte(attrMessageAuthenticator) {
		t.Error("Message-Authenticator is not the first attribute")
	}
	if !isAuthenticResponse(out, req.Authenticator, secret, true) {
		t.Fatal("answer: does not verify")
	}
	two := append(bytes.Clone(out), 80, 18)
	two = append(two, make([]byte, 16)...)
	two[2], two[3] = byte(len(two)>>8), byte(len(two))
	if _, ok := checkMessageAuthenticator(two, req.Authenticator, secret); ok {
		t.Error("two Message-Authenticators accepted")
	}
}
