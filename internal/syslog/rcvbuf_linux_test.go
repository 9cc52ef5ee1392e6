package syslog

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The UDP listener asks the kernel for a receive buffer of ReadBuffer (as
// much as net.core.rmem_max allows): the default one drops many senders'
// bursts without a word.
func TestUDPReceiveBuffer(t *testing.T) {
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
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skip("no /proc/sys/net/core/rmem_max:", err)
	}
	rmemMax, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := pc.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var gerr error
	if err := raw.Control(func(fd uintptr) { got, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil || gerr != nil {
		t.Fatal(err, gerr)
	}
	// The kernel reports twice what was set (its bookkeeping included).
	if want := min(ReadBuffer, rmemMax); got < want {
		t.Errorf("receive buffer %d bytes, want at least %d", got, want)
	}
}
