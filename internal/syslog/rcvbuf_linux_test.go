package syslog

import (
	"testing"

	"github.com/wnms/wnms/internal/udpbuf/udpbuftest"
)

// The UDP listener enlarges its socket's receive buffer (see package
// udpbuf).
func TestUDPReceiveBuffer(t *testing.T) {
	udpbuftest.Check(t, (&Receiver{}).serveUDP)
}
