// Package udpbuf sizes the receive buffer of wnms's UDP listeners
// (RADIUS, syslog).
//
// Senders answered together send together: the NASes that one commit of
// accounting records answers send their next packets at once, and the
// kernel's default receive buffer (208 KiB on Linux, a few hundred
// datagrams) drops such a burst without a word, each drop a retry seconds
// later. Linux caps what a socket may ask for at net.core.rmem_max.
package udpbuf

import (
	"net"
	"os"
	"strconv"
	"strings"
)

// Size is the receive buffer a listener asks of the kernel.
const Size = 4 << 20

// Enlarge asks the kernel for a receive buffer of Size for pc, if pc is a
// socket; the kernel grants at most net.core.rmem_max.
func Enlarge(pc net.PacketConn) {
	if b, ok := pc.(interface{ SetReadBuffer(int) error }); ok {
		b.SetReadBuffer(Size)
	}
}

// Granted is what Enlarge should get on this host: Size, or less when
// net.core.rmem_max is lower; ok is false when the limit cannot be read
// (not Linux).
func Granted() (n int, ok bool) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		return 0, false
	}
	max, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, false
	}
	return min(Size, max), true
}
