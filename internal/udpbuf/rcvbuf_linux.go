package udpbuf

import (
	"fmt"
	"net"
	"syscall"
)

// Of is the receive buffer of a UDP socket, as the kernel reports it
// (twice what was set: its bookkeeping included).
func Of(pc net.PacketConn) (int, error) {
	uc, ok := pc.(*net.UDPConn)
	if !ok {
		return 0, fmt.Errorf("not a UDP socket: %T", pc)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var v int
	var gerr error
	if err := raw.Control(func(fd uintptr) { v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF) }); err != nil {
		return 0, err
	}
	return v, gerr
}
