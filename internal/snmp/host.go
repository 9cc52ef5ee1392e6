package snmp

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The host facts behind IF-MIB and HOST-RESOURCES-MIB, read from Linux's
// /proc and /sys. On a system without them the tables are empty rather
// than wrong.

// iface is one network interface with its counters.
type iface struct {
	index                 int
	name                  string
	mtu                   int
	mac                   []byte
	loopback, up, running bool
	speedMbps             uint64
	inOctets, outOctets   uint64
	inErrors, outErrors   uint64
	inPackets, outPackets uint64
	operUp, operKnown     bool
}

// interfaces lists the host's interfaces in index order.
func interfaces() []iface {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil
	}
	counters := procNetDev()
	out := make([]iface, 0, len(ifs))
	for _, n := range ifs {
		f := iface{index: n.Index, name: n.Name, mtu: n.MTU, mac: n.HardwareAddr,
			loopback: n.Flags&net.FlagLoopback != 0, up: n.Flags&net.FlagUp != 0, running: n.Flags&net.FlagRunning != 0}
		if c, ok := counters[n.Name]; ok {
			f.inOctets, f.inPackets, f.inErrors = c[0], c[1], c[2]
			f.outOctets, f.outPackets, f.outErrors = c[8], c[9], c[10]
		}
		if b, err := os.ReadFile("/sys/class/net/" + n.Name + "/speed"); err == nil {
			if v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err == nil && v > 0 {
				f.speedMbps = uint64(v)
			}
		}
		if b, err := os.ReadFile("/sys/class/net/" + n.Name + "/operstate"); err == nil {
			switch strings.TrimSpace(string(b)) {
			case "up":
				f.operUp, f.operKnown = true, true
			case "down", "lowerlayerdown", "notpresent":
				f.operKnown = true
			}
		}
		if !f.operKnown {
			f.operUp = f.up && f.running
		}
		out = append(out, f)
	}
	return out
}

// procNetDev reads the sixteen counters of each interface in
// /proc/net/dev: received bytes, packets, errs, ... then transmitted.
func procNetDev() map[string][16]uint64 {
	b, err := os.ReadFile("/proc/net/dev")
	if err != nil {
		return nil
	}
	out := map[string][16]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var c [16]uint64
		for i, f := range strings.Fields(rest) {
			if i < 16 {
				c[i], _ = strconv.ParseUint(f, 10, 64)
			}
		}
		out[strings.TrimSpace(name)] = c
	}
	return out
}

// memInfo returns MemTotal and MemAvailable in KiB.
func memInfo() (total, avail uint64) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseUint(f[1], 10, 64)
		switch f[0] {
		case "MemTotal:":
			total = v
		case "MemAvailable:":
			avail = v
		}
	}
	return total, avail
}

// hostUptime is how long the host has run.
func hostUptime() time.Duration {
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	s, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return time.Duration(s * float64(time.Second))
}

// cpuTimes reads the busy and total jiffies of each CPU from /proc/stat.
func cpuTimes() (busy, total []uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var t, idle uint64
		for i, s := range f[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			t += v
			if i == 3 || i == 4 { // idle, iowait
				idle += v
			}
		}
		busy, total = append(busy, t-idle), append(total, t)
	}
	return busy, total
}

// loadSampler keeps a minute of /proc/stat samples so that
// hrProcessorLoad is "the average, over the last minute, of the
// percentage of time that this processor was not idle".
type loadSampler struct {
	mu      sync.Mutex
	samples []cpuSample // oldest first, at most a minute apart
}

type cpuSample struct {
	at          time.Time
	busy, total []uint64
}

// sample records the CPU times now and forgets what is older than a
// minute (keeping one sample at least that old).
func (l *loadSampler) sample(now time.Time) {
	busy, total := cpuTimes()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples = append(l.samples, cpuSample{now, busy, total})
	for len(l.samples) > 2 && now.Sub(l.samples[1].at) >= time.Minute {
		l.samples = l.samples[1:]
	}
}

// loads is the percentage busy of each CPU between the oldest and the
// newest sample.
func (l *loadSampler) loads() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.samples) < 2 {
		return nil
	}
	a, b := l.samples[0], l.samples[len(l.samples)-1]
	if len(a.busy) != len(b.busy) {
		return nil
	}
	out := make([]int, len(b.busy))
	for i := range b.busy {
		dt := b.total[i] - a.total[i]
		if dt > 0 {
			out[i] = int((b.busy[i] - a.busy[i]) * 100 / dt)
		}
	}
	return out
}
