package udpbuf_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/wnms/wnms/internal/udpbuf"
	"github.com/wnms/wnms/internal/udpbuf/udpbuftest"
)

// Enlarge gets a socket the receive buffer Granted says, more than it had
// (the default is far smaller).
func TestEnlarge(t *testing.T) {
	udpbuftest.Check(t, func(_ context.Context, pc net.PacketConn) error {
		before, err := udpbuf.Of(pc)
		if err != nil {
			return err
		}
		udpbuf.Enlarge(pc)
		if after, err := udpbuf.Of(pc); err != nil || after <= before {
			return fmt.Errorf("receive buffer %d bytes before, %d after (%v)", before, after, err)
		}
		return nil
	})
}
