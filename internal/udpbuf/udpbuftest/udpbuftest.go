// Package udpbuftest checks that a UDP listener's read loop enlarges its
// socket's receive buffer (package udpbuf).
package udpbuftest

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/udpbuf"
)

// Check runs serve on a fresh loopback socket with its context already
// ended (it must return at its first read) and fails t unless the socket
// then has the receive buffer udpbuf.Granted says. It is skipped where
// the host's limit cannot be read.
func Check(t *testing.T, serve func(ctx context.Context, pc net.PacketConn) error) {
	t.Helper()
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
	pc.SetReadDeadline(time.Now())
	if err := serve(ctx, pc); err != nil {
		t.Fatal(err)
	}
	if got, err := udpbuf.Of(pc); err != nil || got < want {
		t.Errorf("receive buffer %d bytes (%v), want at least %d", got, err, want)
	}
}
