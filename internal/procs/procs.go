// Package procs sets how many goroutines a server over the embedded
// SQLite store runs at once (GOMAXPROCS) on a small machine.
//
// Go gives a running goroutine its processor for up to 10 ms before it
// preempts it. On a machine of two cores, SQLite's writer (which runs in
// the server's process) and a batch of RADIUS accounting records can hold
// both processors for milliseconds, and a console user's read waits
// behind them. With at least four processors the operating system, not
// Go, shares the cores among them, in slices far shorter than 10 ms:
// measured on 2 cores at 5,000 accounting packets/s, a read's p99 fell
// from 6.2–7.3 ms to 2.9–4.0 ms and goroutines' waits to run from
// 5.2–6.3 ms to 1.3–1.8 ms (p99), with the accounting rate unchanged.
// Over PostgreSQL the database's work runs in its own processes, which the
// operating system already shares the cores with; there more processors
// only took cores from a database on the same machine (its syslog rate
// fell), so the server leaves GOMAXPROCS as Go sets it.
package procs

import (
	"os"
	"runtime"
)

// Min is the fewest processors the server runs with.
const Min = 4

// Ensure raises GOMAXPROCS to Min on a machine of fewer cores, unless the
// GOMAXPROCS environment variable set it, or a CPU limit (a container's)
// set it below the machine's cores (more processors than a CPU quota
// would only run into the quota sooner). It returns the value in force
// before and after.
func Ensure() (before, after int) {
	before = runtime.GOMAXPROCS(0)
	after = want(os.Getenv("GOMAXPROCS"), before, runtime.NumCPU())
	if after != before {
		runtime.GOMAXPROCS(after)
	}
	return before, after
}

// want is the GOMAXPROCS Ensure sets: env is the GOMAXPROCS environment
// variable, current the value in force, cpus the machine's cores.
func want(env string, current, cpus int) int {
	if env != "" || current < cpus || current >= Min {
		return current
	}
	return Min
}
