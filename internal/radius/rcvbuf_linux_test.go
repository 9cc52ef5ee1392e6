package radius

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/wnms/wnms/internal/udpbuf/udpbuftest"
)

// The RADIUS listeners' read loop enlarges its socket's receive buffer
// (see package udpbuf).
func TestReadLoopReceiveBuffer(t *testing.T) {
	udpbuftest.Check(t, func(ctx context.Context, pc net.PacketConn) error {
		return readLoop(ctx, pc, func([]byte, netip.AddrPort) {})
	})
}
