package radius

import (
	"context"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The listeners ask the kernel for a receive buffer of ReadBuffer (as
// much as net.core.rmem_max allows): the default one drops a burst of a
// few hundred NASes' packets without a word.
func TestReadLoopReceiveBuffer(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pc.SetReadDeadline(time.Now()) // the loop returns at its first read
	if err := readLoop(ctx, pc, func([]byte, netip.AddrPort) {}); err != nil {
		t.Fatal(err)
	}
	if got, want := receiveBuffer(t, pc), min(ReadBuffer, rmemMax(t)); got < want {
		t.Errorf("receive buffer %d bytes, want at least %d", got, want)
	}
}

// receiveBuffer is pc's SO_RCVBUF (the kernel reports twice what was
// set, its bookkeeping included).
func receiveBuffer(t *testing.T, pc net.PacketConn) int {
	t.Helper()
	raw, err := pc.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var gerr error
	if err := raw.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	return v
}

// rmemMax is the most a socket may ask for (net.core.rmem_max).
func rmemMax(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skip("no /proc/sys/net/core/rmem_max:", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
