package syslog

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/udpbuf"
)

// The UDP listener enlarges its socket's receive buffer (see package
// udpbuf).
func TestUDPReceiveBuffer(t *testing.T) {
	want, ok := udpbuf.Granted()
	if !ok {
		t.Skip("net.core.rmem_max cannot be read")
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pc.SetReadDeadline(time.Now()) // the loop returns at its first read
	if err := (&Receiver{}).serveUDP(ctx, pc); err != nil {
		t.Fatal(err)
	}
	if got, err := udpbuf.Of(pc); err != nil || got < want {
		t.Errorf("receive buffer %d bytes (%v), want at least %d", got, err, want)
	}
}
