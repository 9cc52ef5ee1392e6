package udpbuf

import (
	"net"
	"testing"
)

// Enlarge gets a socket the receive buffer Granted says (the default is
// far smaller).
func TestEnlarge(t *testing.T) {
	want, ok := Granted()
	if !ok {
		t.Skip("net.core.rmem_max cannot be read")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	before, err := Of(pc)
	if err != nil {
		t.Fatal(err)
	}
	Enlarge(pc)
	after, err := Of(pc)
	if err != nil {
		t.Fatal(err)
	}
	if after < want || after <= before {
		t.Errorf("receive buffer %d bytes before, %d after; want at least %d", before, after, want)
	}
}
