//go:build unix

package main

import "syscall"

// connBudget raises the open-file limit to its hard maximum and returns the
// default connection cap of a listener: three quarters of it, leaving room
// for the store, log files and the other listener.
func connBudget() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 1024
	}
	if l.Cur < l.Max {
		raised := l
		raised.Cur = l.Max
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			l = raised
		}
	}
	n := l.Cur / 4 * 3 / 2 // two listeners share the budget
	if n < 64 {
		n = 64
	}
	if n > 1<<20 {
		n = 1 << 20
	}
	return int(n)
}
