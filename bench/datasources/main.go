// Command datasources measures the RADIUS accounting server and the syslog
// receiver through the whole write path (the bridge, ingest, the store):
// accounting packets answered per second, each answer after its record
// was committed, and syslog lines parsed and stored per second; and what
// an authenticated read (GET users/current) and an API-key login cost
// meanwhile, against the same two alone: as a console user in a process
// of its own waits for them, and as long as the server's handler took.
//
//	go run ./bench/datasources                       # SQLite in a temporary directory
//	go run ./bench/datasources -database-url "$URL"  # PostgreSQL
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	rtmetrics "runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	rad "layeh.com/radius"
	"layeh.com/radius/rfc2865"
	"layeh.com/radius/rfc2866"
	"layeh.com/radius/rfc2869"

	"github.com/wnms/wnms/bench/internal/benchserver"
	"github.com/wnms/wnms/internal/datasource"
	"github.com/wnms/wnms/internal/metrics"
	"github.com/wnms/wnms/internal/procs"
	"github.com/wnms/wnms/internal/radius"
	"github.com/wnms/wnms/internal/syslog"
	"github.com/wnms/wnms/internal/wnms"
)

var (
	dbURL    = flag.String("database-url", "", "PostgreSQL URL; empty: SQLite in a temporary directory")
	duration = flag.Duration("duration", 10*time.Second, "how long the accounting load runs")
	nases    = flag.Int("nas", 64, "NAS sockets sending accounting packets")
	clients  = flag.Int("clients", 16, "clients a NAS socket's sessions go round (at most 65,536)")
	rate     = flag.Float64("rate", 5000, "packets/s of the second, paced accounting load (0: none)")
	lines    = flag.Int("lines", 200_000, "syslog lines sent (6 a client connection)")
	sendTo   = flag.String("send-to", "", "run as the NAS process, sending to this address (used by the benchmark itself)")
	console  = flag.String("console-of", "", "run as the console user of the server at this URL (used by the benchmark itself)")
	cpuProf  = flag.String("cpuprofile", "", "write a CPU profile of the accounting load to this file")
	spin     = flag.Float64("spin", 0, "share of the machine's cores (0 to 1) a process that only spins takes in an extra phase, beside the console user alone: what sharing the cores does by itself (0: no such phase)")
	spinning = flag.Bool("spinning", false, "run as the spinning process for -duration (used by the benchmark itself)")
)

const secret = "bench-nas-secret"

func main() {
	flag.Parse()
	if *nases < 1 || *clients < 1 || *clients > 1<<16 {
		log.Fatal("-nas must be at least 1, and -clients 1 to 65,536")
	}
	if *sendTo != "" {
		sendAccounting(*sendTo)
		return
	}
	if *spinning {
		spinFor(*duration, *spin)
		return
	}
	if *console != "" {
		u := user{client: &http.Client{Timeout: time.Minute}, base: *console,
			cookie: os.Getenv(envCookie), login: []byte(os.Getenv(envLogin))}
		var r consoleResult
		r.Reads, r.Logins = u.interact(*duration, func() {
			// Warmed up: tell the benchmark, and start when it says.
			fmt.Println("ready")
			_, err := bufio.NewReader(os.Stdin).ReadString('\n')
			check(err)
		})
		check(json.NewEncoder(os.Stdout).Encode(r))
		return
	}
	if *dbURL == "" {
		procs.Ensure() // as wnms serve does over SQLite
	}
	ctx := context.Background()
	st, closeStore, err := benchserver.OpenStore(ctx, *dbURL, "bench-datasources")
	check(err)
	defer closeStore()
	srv, err := benchserver.Start(ctx, st)
	check(err)
	client := &http.Client{Timeout: time.Minute}
	cookie, err := srv.Session(ctx, client)
	check(err)
	keyID, keyValue, err := srv.Key(ctx)
	check(err)
	login := []byte(fmt.Sprintf(`{"type":"apikeycredentials","keyId":%q,"keyValue":%q}`, keyID, keyValue))
	srv.TimeHandling(readPath, loginPath)
	u := user{client: client, base: srv.Base, cookie: cookie, login: login, srv: srv}

	// An AP with the radio the packets name, at a floor, and the source.
	floor := fmt.Sprintf(`{"parentLocation":{"type":"locallocationid","id":0},"location":{"type":"floorlocation","name":"Bench floor %d"}}`, time.Now().UnixNano())
	made, err := benchserver.Send(client, "PUT", srv.Base+"/V2/locations", cookie, []byte(floor))
	check(err)
	var loc wnms.Location
	check(json.Unmarshal(made, &loc))
	floorID := loc.ID.ID
	_, err = benchserver.Post(client, srv.Base+"/V5/ingest/aps", cookie, fmt.Appendf(nil,
		`[{"macaddress":"AA:BB:CC:00:00:00","name":"bench-ap","ipAddress":"127.0.0.1","locationId":{"type":"locallocationid","id":%d},
		"radios":[{"macaddress":"AA:BB:CC:DD:EE:FF","channel":36,"ssid":"corp"}]}]`, floorID))
	check(err)
	_, err = st.UpdateDataSources(ctx, wnms.OnPremCustomer, func(*wnms.DataSources) (*wnms.DataSources, error) {
		d := wnms.EmptyDataSources()
		d.Sources = []wnms.DataSource{{Name: "bench", CIDR: "127.0.0.1/32", RadiusSecret: secret, Syslog: true,
			LocationID: wnms.LocalID(floorID)}}
		return d, nil
	})
	check(err)
	reg := metrics.NewRegistry()
	b := &datasource.Bridge{Store: st, Ingest: srv.API.Telemetry, Radius: &radius.Settings{}, Registry: reg}
	check(b.Reload(ctx))
	engine := "SQLite"
	if *dbURL != "" {
		engine = "PostgreSQL"
	}

	reads, logins, busy := u.elsewhere(ctx, *duration)
	fmt.Printf("%s: alone (cores %.0f%% busy): GET users/current %s; API-key login %s\n", engine, 100*busy, reads, logins)
	if *spin > 0 {
		besideSpinning(ctx, u, engine)
	}
	accounting(ctx, b, u, engine, 0)
	if *rate > 0 {
		accounting(ctx, b, u, engine, *rate)
	}
	syslogIntake(ctx, b, engine)
	// What became of the records, as /metrics shows it.
	var out strings.Builder
	reg.Write(&out)
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "wnms_datasource_records_total{") {
			fmt.Printf("%s: %s\n", engine, l)
		}
	}
}

// accounting measures the accounting server: NAS sockets send Starts and
// Stops for the duration, as fast as the answers come (rate 0) or at rate
// packets a second in all whatever the answers do (see sendAccounting),
// while a console user reads and logs in. The NAS sockets run in a process of their own (this program again,
// with -send-to), as a network's NASes are other machines: the server's
// scheduler then holds only the server's work, as in production, and the
// two processes share the machine's cores.
func accounting(ctx context.Context, b *datasource.Bridge, u user, engine string, rate float64) {
	a := radius.NewAccounting(b.Radius, b, radius.AccountingOptions{})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	check(err)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go a.Serve(ctx, pc)
	self, err := os.Executable()
	check(err)
	cmd := exec.CommandContext(ctx, self, "-send-to", pc.LocalAddr().String(), "-nas", strconv.Itoa(*nases), "-clients", strconv.Itoa(*clients),
		"-rate", strconv.FormatFloat(rate, 'f', -1, 64), "-duration", duration.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	if *cpuProf != "" && rate == 0 {
		f, err := os.Create(*cpuProf)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer f.Close()
	}
	before := schedLatencies()
	reads, logins, busy := u.elsewhere(ctx, *duration)
	sched := quantiles(before, schedLatencies())
	pprof.StopCPUProfile()
	var sent nasResult
	check(json.NewDecoder(out).Decode(&sent))
	check(cmd.Wait())
	cs := a.Counters()
	load := "as fast as answered"
	if rate > 0 {
		load = fmt.Sprintf("paced at %.0f/s", rate)
	}
	fmt.Printf("%s: accounting (%s), %d NAS sockets: %d packets sent, %d answered after commit in %s = %.0f packets/s",
		engine, load, *nases, sent.Sent, sent.Answered-sent.AnsweredAfter, sent.Wall.Round(time.Millisecond),
		float64(sent.Answered-sent.AnsweredAfter)/sent.Wall.Seconds())
	if rate > 0 {
		fmt.Printf(" (%d more in the 3 s after, %d never)", sent.AnsweredAfter, sent.Sent-sent.Answered)
	}
	fmt.Printf("; %d retries; %d records committed, %d sink errors", sent.Retries, cs.Events.Load(), cs.SinkErrors.Load())
	if sent.Latency != "" {
		fmt.Printf("; %s", sent.Latency)
	}
	fmt.Println()
	fmt.Printf("%s: during accounting (%s; cores %.0f%% busy): GET users/current %s; API-key login %s; server goroutines waiting to run %s\n",
		engine, load, 100*busy, reads, logins, sched)

}

// besideSpinning measures the console user alone again while a process
// that does nothing but spin takes about -spin of the machine's cores:
// how much of what the accounting load does to the calls' latency any
// load of that size does, wnms or not.
func besideSpinning(ctx context.Context, u user, engine string) {
	self, err := os.Executable()
	check(err)
	d := *duration
	cmd := exec.CommandContext(ctx, self, "-spinning", "-spin", strconv.FormatFloat(*spin, 'f', -1, 64), "-duration", (d + 2*time.Second).String())
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	time.Sleep(time.Second) // its share settles
	spun, start := processTicks(cmd.Process.Pid), time.Now()
	reads, logins, busy := u.elsewhere(ctx, d)
	share := float64(processTicks(cmd.Process.Pid)-spun) / ticksPerSecond / time.Since(start).Seconds() / float64(runtime.NumCPU())
	check(cmd.Wait())
	fmt.Printf("%s: beside a process spinning on %.0f%% of the cores (cores %.0f%% busy): GET users/current %s; API-key login %s\n",
		engine, 100*share, 100*busy, reads, logins)
}

// ticksPerSecond is Linux's USER_HZ, the unit of /proc's CPU times.
const ticksPerSecond = 100

// processTicks is the CPU time process pid has taken so far (/proc/pid/stat).
func processTicks(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	check(err)
	// After the command's name in parentheses: state is field 3, utime
	// and stime fields 14 and 15.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err := strconv.ParseUint(f[11], 10, 64)
	check(err)
	stime, err := strconv.ParseUint(f[12], 10, 64)
	check(err)
	return utime + stime
}

// machineTicks is the machine's busy and total CPU time so far
// (/proc/stat's first line: user, nice, system, idle, iowait, irq,
// softirq, steal; idle and iowait are not busy).
func machineTicks() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	check(err)
	line, _, _ := strings.Cut(string(b), "\n")
	for i, v := range strings.Fields(line)[1:9] {
		n, err := strconv.ParseUint(v, 10, 64)
		check(err)
		total += n
		if i != 3 && i != 4 {
			busy += n
		}
	}
	return busy, total
}

// spinFor is the spinning process: for d, threads that spin for
// moments of 50 µs to 1 ms and sleep between them, their busy share
// steered every 100 ms by the process's own CPU time toward share of the
// machine's cores.
func spinFor(d time.Duration, share float64) {
	threads := 3 * runtime.NumCPU()
	var duty atomic.Uint64 // of each thread, as math.Float64bits
	duty.Store(math.Float64bits(min(0.95, share*float64(runtime.NumCPU())/float64(threads))))
	end := time.Now().Add(d)
	for range threads {
		go func() {
			runtime.LockOSThread()
			for time.Now().Before(end) {
				busy := time.Duration(50+rand.IntN(1000)) * time.Microsecond
				for t := time.Now(); time.Since(t) < busy; {
				}
				f := math.Float64frombits(duty.Load())
				time.Sleep(time.Duration(float64(busy) * (1 - f) / f))
			}
		}()
	}
	cpuTime := func() time.Duration {
		var ru syscall.Rusage
		check(syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	last, lastAt := cpuTime(), time.Now()
	for time.Now().Before(end) {
		time.Sleep(100 * time.Millisecond)
		now, at := cpuTime(), time.Now()
		got := (now - last).Seconds() / at.Sub(lastAt).Seconds() / float64(runtime.NumCPU())
		last, lastAt = now, at
		if got > 0 {
			f := math.Float64frombits(duty.Load()) * (1 + 0.5*(share/got-1))
			duty.Store(math.Float64bits(max(0.01, min(0.95, f))))
		}
	}
}

// nasResult is what the NAS process reports on its standard output.
type nasResult struct {
	Sent, Answered, Retries int64
	AnsweredAfter           int64 // of Answered, after the sending ended (paced)
	Wall                    time.Duration
	Latency                 string // of the answers, when paced
}

// sendAccounting is the NAS process: it sends Starts and Stops to to from
// nas sockets for the duration and writes its nasResult as JSON to its
// standard output. As fast as answered (rate 0), each socket has one
// packet in flight and sends it again after 2 s without an answer. Paced
// (rate > 0), each socket sends on its schedule whatever the answers do,
// rate packets a second in all, as a NAS sends its sessions' accounting,
// and reads the answers beside, each matched to its packet by a sequence
// number in Proxy-State (which the server sends back); the run waits up
// to 3 s for the last answers and reports the answers' latency.
func sendAccounting(to string) {
	addr, err := net.ResolveUDPAddr("udp", to)
	check(err)
	var sent, answered, after, retries atomic.Int64
	var latMu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(*duration)
	for w := range *nases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			check(err)
			defer c.Close()
			packet := func(i int64) []byte {
				// Start and Stop of one session after another: each an event
				// stored, and each Stop a sample of the session's bytes.
				p := rad.New(rad.CodeAccountingRequest, []byte(secret))
				p.Identifier = byte(i)
				p.Add(attrProxyState, binary.BigEndian.AppendUint64(nil, uint64(i)))
				status := rfc2866.AcctStatusType_Value_Start
				if i%2 == 0 {
					status = rfc2866.AcctStatusType_Value_Stop
				}
				rfc2866.AcctStatusType_Set(p, status)
				rfc2866.AcctSessionID_SetString(p, fmt.Sprintf("bench-%d-%d-%d", start.UnixNano(), w, (i+1)/2))
				// Each socket an AP whose clients connect in turn: a client's
				// row is updated every few seconds, as in a network that sends
				// this many packets, not hundreds of times a second. The
				// second octet tells one run's clients from another's.
				k := (i - 1) / 2 % int64(*clients)
				rfc2865.CallingStationID_SetString(p, fmt.Sprintf("02-%02X-%02X-%02X-%02X-%02X", start.Unix()&255, w>>8&255, w&255, k>>8&255, k&255))
				rfc2865.CalledStationID_SetString(p, "AA-BB-CC-DD-EE-FF:corp")
				rfc2866.AcctInputOctets_Set(p, rfc2866.AcctInputOctets(i*1000))
				rfc2866.AcctOutputOctets_Set(p, rfc2866.AcctOutputOctets(i*4000))
				// A second apart (the attribute counts seconds), so that each
				// Stop is a sample of its own, as a client's sessions are.
				rfc2869.EventTimestamp_Set(p, start.Add(time.Duration(i)*time.Second))
				wire, err := p.Encode()
				check(err)
				return wire
			}
			buf := make([]byte, 4096)
			if *rate <= 0 {
				for i := int64(1); time.Now().Before(end); i++ {
					wire := packet(i)
					sent.Add(1)
					for {
						c.WriteToUDP(wire, addr)
						c.SetReadDeadline(time.Now().Add(2 * time.Second))
						if _, _, err := c.ReadFromUDP(buf); err == nil {
							answered.Add(1)
							break
						}
						retries.Add(1)
					}
				}
				return
			}
			// Paced: the answers are read beside the sending; pending holds
			// when each packet still unanswered was sent, by sequence number.
			var mu sync.Mutex
			pending := map[int64]time.Time{}
			done := make(chan struct{})
			go func() {
				defer close(done)
				var mine []time.Duration
				c.SetReadDeadline(end.Add(3 * time.Second))
				for {
					n, _, err := c.ReadFromUDP(buf)
					if err != nil {
						break
					}
					seq, ok := proxyState(buf[:n])
					mu.Lock()
					at, waiting := pending[seq]
					delete(pending, seq)
					mu.Unlock()
					if ok && waiting {
						answered.Add(1)
						if time.Now().After(end) {
							after.Add(1)
						}
						mine = append(mine, time.Since(at))
					}
				}
				latMu.Lock()
				lat = append(lat, mine...)
				latMu.Unlock()
			}()
			every := time.Duration(float64(*nases) / *rate * float64(time.Second))
			next := start.Add(every * time.Duration(w) / time.Duration(*nases))
			for i := int64(1); next.Before(end); i++ {
				time.Sleep(time.Until(next))
				next = next.Add(every)
				wire := packet(i)
				mu.Lock()
				pending[i] = time.Now()
				mu.Unlock()
				c.WriteToUDP(wire, addr)
				sent.Add(1)
			}
			// Stop reading once every answer came, or 3 s after the end.
			for deadline := end.Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				mu.Lock()
				n := len(pending)
				mu.Unlock()
				if n == 0 {
					break
				}
			}
			c.SetReadDeadline(time.Now())
			<-done
		}()
	}
	wg.Wait()
	r := nasResult{Sent: sent.Load(), Answered: answered.Load(), AnsweredAfter: after.Load(), Retries: retries.Load(), Wall: time.Since(start)}
	if *rate > 0 {
		r.Wall = *duration // the sending's
		slices.Sort(lat)
		if len(lat) > 0 {
			r.Latency = fmt.Sprintf("answer latency p50 %s, p99 %s, max %s", quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 1))
		}
	}
	check(json.NewEncoder(os.Stdout).Encode(r))
}

// syslogIntake sends lines over TCP as a syslog daemon forwards them and
// waits until every connection's events are stored.
func syslogIntake(ctx context.Context, b *datasource.Bridge, engine string) {
	a := &syslog.Assembler{Sink: syslog.SinkFunc(b.EmitSyslog)}
	r := &syslog.Receiver{Handle: a.Observe, Accept: b.AcceptSyslog}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan struct{})
	go func() { a.Run(ctx); close(ran) }()
	go r.Serve(ctx, nil, ln)
	conn, err := net.Dial("tcp", ln.Addr().String())
	check(err)
	w := bufio.NewWriterSize(conn, 1<<16)
	now := time.Now().UTC()
	clients := *lines / 6
	start := time.Now()
	run := start.UnixNano() % 0xffff
	for c := range clients {
		mac := fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", run>>8, run&255, c>>16&255, c>>8&255, c&255)
		ts := now.Add(-time.Duration(clients-c) * time.Millisecond).Format(time.Stamp)
		for _, l := range []string{
			"<30>%s ap hostapd: wlan0: STA %s IEEE 802.11: associated (aid 1)",
			"<29>%s ap hostapd: wlan0: AP-STA-CONNECTED %s",
			"<30>%s ap hostapd: wlan0: STA %s WPA: pairwise key handshake completed (RSN)",
			"<30>%s ap dnsmasq-dhcp[1403]: DHCPDISCOVER(br-lan) %s ",
			"<30>%s ap dnsmasq-dhcp[1403]: DHCPACK(br-lan) 10.66.0.5 %s phone",
			"<30>%s ap hostapd: wlan0: AP-STA-DISCONNECTED %s",
		} {
			fmt.Fprintf(w, l+"\n", ts, mac)
		}
	}
	check(w.Flush())
	sent := time.Since(start)
	for r.Stats().Parsed < uint64(clients*6) {
		time.Sleep(10 * time.Millisecond)
	}
	// Every line is read: Run stores what is left and returns once every
	// batch, those in flight too, is stored.
	cancel()
	<-ran
	wall := time.Since(start)
	conn.Close()
	s := a.Stats()
	fmt.Printf("%s: syslog over TCP: %d lines (%d connections) parsed and stored in %s = %.0f lines/s (sent in %s); %d events, %d batches, %d emit errors\n",
		engine, clients*6, clients, wall.Round(time.Millisecond), float64(clients*6)/wall.Seconds(), sent.Round(time.Millisecond),
		s.Events["Success"]+s.Events["Intermediate"]+s.Events["Failure"], s.Batches, s.EmitErrors)
}

// user is someone at the console meanwhile: reads with a session, and
// logs in with an API key.
type user struct {
	client       *http.Client
	base, cookie string
	login        []byte              // the key login's body
	srv          *benchserver.Server // nil in the console user's process
}

// The paths of the console user's calls, as the server times them.
const (
	readPath  = "/V5/users/current"
	loginPath = "/login/key/"
)

// The console user's process learns the session and the login from its
// environment (not its command line, which any local user can read).
const (
	envCookie = "WNMS_BENCH_COOKIE"
	envLogin  = "WNMS_BENCH_LOGIN"
)

// consoleResult is what the console user's process reports on its
// standard output.
type consoleResult struct{ Reads, Logins string }

// elsewhere runs interact for d in a process of its own (this program
// again, with -console-of), as a console user sits at another machine:
// measured from the server's own process, a call's time would include
// the wait of the measuring goroutine for the server's scheduler, which
// no real user's call waits for. Each description ends with how long
// the server's handler took for the calls, from its start to its return:
// without the waits before it runs and after it returns (a wait for a
// core while it runs is in it). busy is the share of the machine's cores
// busy meanwhile, whoever kept them so.
func (u user) elsewhere(ctx context.Context, d time.Duration) (reads, logins string, busy float64) {
	self, err := os.Executable()
	check(err)
	cmd := exec.CommandContext(ctx, self, "-console-of", u.base, "-duration", d.String())
	cmd.Env = append(os.Environ(), envCookie+"="+u.cookie, envLogin+"="+string(u.login))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	check(err)
	stdout, err := cmd.StdoutPipe()
	check(err)
	check(cmd.Start())
	out := bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	check(err)
	if line != "ready\n" {
		log.Fatalf("console user: %q", line)
	}
	u.srv.Handled(readPath) // the calls before the timed ones
	u.srv.Handled(loginPath)
	busy0, total0 := machineTicks()
	_, err = in.Write([]byte("go\n"))
	check(err)
	var r consoleResult
	check(json.NewDecoder(out).Decode(&r))
	check(cmd.Wait())
	busy1, total1 := machineTicks()
	return r.Reads + handling(u.srv.Handled(readPath)), r.Logins + handling(u.srv.Handled(loginPath)),
		float64(busy1-busy0) / float64(max(1, total1-total0))
}

// handling describes the server's handling times of some calls.
func handling(took []time.Duration) string {
	if len(took) == 0 {
		return " (none handled)"
	}
	slices.Sort(took)
	return fmt.Sprintf(" (handled in p50 %s, p99 %s)", quantile(took, 0.5), quantile(took, 0.99))
}

// interact makes authenticated reads (every 10 ms) and beside them
// API-key logins (every 100 ms), as a busy console and its users would,
// for d, and describes the latency of each. Each makes one untimed call
// first; ready is called once both have, before the timed ones.
// Paced, not back to back: what is measured is how long a user waits,
// not how much of the machine a loop can take from the load.
func (u user) interact(d time.Duration, ready func()) (reads, logins string) {
	var warm, done sync.WaitGroup
	start := make(chan struct{})
	warm.Add(2)
	done.Add(2)
	go func() {
		defer done.Done()
		reads = loop(d, 10*time.Millisecond, &warm, start, func() error {
			_, err := benchserver.Get(u.client, u.base+readPath, u.cookie)
			return err
		})
	}()
	go func() {
		defer done.Done()
		logins = loop(d, 100*time.Millisecond, &warm, start, func() error {
			_, err := benchserver.Post(u.client, u.base+loginPath+"bench/3600", "", u.login)
			return err
		})
	}()
	warm.Wait()
	ready()
	close(start)
	done.Wait()
	return reads, logins
}

// loop calls f once untimed (it opens the connection the others reuse,
// as a console's page has), says so to warm, and once start is closed
// calls f every period (or at once after a call that took longer) for d,
// and describes the calls' latency.
func loop(d, period time.Duration, warm *sync.WaitGroup, start <-chan struct{}, f func() error) string {
	var lat []time.Duration
	check(f())
	warm.Done()
	<-start
	begin := time.Now()
	for next := begin; time.Since(begin) < d; next = next.Add(period) {
		time.Sleep(time.Until(next))
		t := time.Now()
		check(f())
		lat = append(lat, time.Since(t))
	}
	slices.Sort(lat)
	return fmt.Sprintf("%d calls, p50 %s, p99 %s, max %s", len(lat), quantile(lat, 0.5), quantile(lat, 0.99), quantile(lat, 1))
}

// quantile is the p-quantile of sorted (the smallest value that at least
// p of them do not exceed).
func quantile(sorted []time.Duration, p float64) time.Duration {
	i := max(0, min(len(sorted)-1, int(math.Ceil(p*float64(len(sorted))))-1))
	return sorted[i].Round(10 * time.Microsecond)
}

// attrProxyState is RADIUS's Proxy-State attribute (RFC 2865 §5.33),
// which a server copies into its answer.
const attrProxyState = 33

// proxyState is the sequence number a NAS packet carried in Proxy-State,
// read from the server's answer.
func proxyState(b []byte) (int64, bool) {
	if len(b) < 20 {
		return 0, false
	}
	for a := b[20:]; len(a) >= 2 && int(a[1]) >= 2 && int(a[1]) <= len(a); a = a[a[1]:] {
		if a[0] == attrProxyState && a[1] == 10 {
			return int64(binary.BigEndian.Uint64(a[2:10])), true
		}
	}
	return 0, false
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// schedLatencies is the runtime's histogram of how long goroutines were
// runnable before they ran, since the process started.
func schedLatencies() *rtmetrics.Float64Histogram {
	s := []rtmetrics.Sample{{Name: "/sched/latencies:seconds"}}
	rtmetrics.Read(s)
	return s[0].Value.Float64Histogram()
}

// quantiles describes the latencies recorded between two readings of a
// histogram: its p50, p99 and p99.9 (each the upper bound of a bucket).
// The runtime's histogram covers the whole process: the server's
// goroutines, and the console user's few.
func quantiles(before, after *rtmetrics.Float64Histogram) string {
	var total uint64
	counts := make([]uint64, len(after.Counts))
	for i := range counts {
		counts[i] = after.Counts[i] - before.Counts[i]
		total += counts[i]
	}
	if total == 0 {
		return "none recorded"
	}
	var out []string
	for _, p := range []float64{0.5, 0.99, 0.999} {
		var n uint64
		for i, c := range counts {
			if n += c; float64(n) >= p*float64(total) {
				bound := after.Buckets[i+1]
				if math.IsInf(bound, 1) {
					out = append(out, fmt.Sprintf("p%g over %s", p*100, time.Duration(after.Buckets[i]*float64(time.Second))))
				} else {
					out = append(out, fmt.Sprintf("p%g %s", p*100, time.Duration(bound*float64(time.Second)).Round(time.Microsecond)))
				}
				break
			}
		}
	}
	return strings.Join(out, ", ")
}
