package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// soak starts the server, runs the load and the faults for -duration,
// stops everything and keeps what the report needs.
func (r *run) soak(ctx context.Context) error {
	if err := r.serve(ctx); err != nil {
		return err
	}
	if err := r.login(); err != nil {
		return err
	}
	if err := r.setup(); err != nil {
		return err
	}
	engine := "SQLite"
	if r.dbURL != "" {
		engine = "PostgreSQL"
	}
	logf("%s, %s of load at scale %g; data in %s", engine, *duration, *scale, r.tmp)
	r.start = time.Now()
	loadCtx, stopLoad := context.WithTimeout(ctx, *duration)
	defer stopLoad()
	var loads, ingest, sampling sync.WaitGroup
	sampleCtx, stopSampling := context.WithCancel(context.Background())
	r.sample(sampleCtx, &sampling)
	r.simulator(loadCtx, &loads)
	r.ingestLoop(loadCtx, &ingest)
	r.reads(loadCtx, &loads)
	r.stream(loadCtx, &loads)
	r.authLoad(loadCtx, &loads)
	r.accounting(loadCtx, &loads)
	r.syslogLoad(loadCtx, &loads)
	faultErr := r.runFaults(loadCtx)
	<-loadCtx.Done()
	logf("load ends; waiting for the batches and packets in flight")
	loads.Wait()
	ingest.Wait()
	stopSampling()
	sampling.Wait()
	if faultErr != nil {
		return faultErr
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	// A clean stop, then the store is read directly.
	t := time.Now()
	r.kill(syscall.SIGTERM)
	r.fault("SIGTERM: wnms stopped in %s", time.Since(t).Round(time.Millisecond))
	return nil
}

// faults runs the faults at their times in the run, one after the other,
// until ctx ends: the kills at 1/(kills+1), 2/(kills+1), ... of the
// run; FreeRADIUS down from 35 %; the junk at 62 %; PostgreSQL's restart
// at 88 %.
func (r *run) runFaults(ctx context.Context) error {
	type fault struct {
		at time.Duration
		do func() error
	}
	var fs []fault
	at := func(f float64) time.Duration { return time.Duration(f * float64(*duration)) }
	for i := range *kills {
		fs = append(fs, fault{at(float64(i+1) / float64(*kills+1)), func() error {
			t0 := time.Now()
			r.kill(syscall.SIGKILL)
			if err := r.serve(context.Background()); err != nil {
				return err
			}
			t1 := time.Now()
			r.addWindow(window{"kill -9", t0, t1})
			r.fault("kill -9 and restart: down %s", t1.Sub(t0).Round(time.Millisecond))
			return nil
		}})
	}
	if *radiusDown > 0 {
		fs = append(fs, fault{at(0.35), func() error {
			r.fr.Stop()
			r.fault("FreeRADIUS stopped for %s", *radiusDown)
			return nil
		}}, fault{at(0.35) + *radiusDown, func() error {
			if err := r.fr.Restart(); err != nil {
				r.fault("FreeRADIUS did not start again (%v); trying once more", firstLine(err))
				if err := r.fr.Restart(); err != nil {
					return err
				}
			}
			r.fault("FreeRADIUS started again")
			return nil
		}})
	}
	if *junk {
		fs = append(fs, fault{at(0.62), func() error { r.junkBurst(); return nil }})
	}
	if *pgRestart {
		fs = append(fs, fault{at(0.88), func() error {
			t0 := time.Now()
			out, err := exec.Command("sh", "-c", *pgCmd).CombinedOutput()
			if err != nil {
				r.fault("%s: %v %s", *pgCmd, err, out)
				return nil
			}
			// Down until a read of the store answers again.
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				if s, _, _ := r.call(context.Background(), "probe", "GET", "/V5/devices/clientevents/02:00:00:00:00:00/0/1", nil); s == 200 {
					break
				}
			}
			t1 := time.Now()
			r.addWindow(window{"PostgreSQL restart", t0, t1})
			r.fault("PostgreSQL restarted (%s): reads answer again after %s", *pgCmd, t1.Sub(t0).Round(time.Millisecond))
			return nil
		}})
	}
	sort.Slice(fs, func(i, j int) bool { return fs[i].at < fs[j].at })
	for _, f := range fs {
		if ctx.Err() != nil {
			return nil // the run is over: the faults left are not done
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(r.start.Add(f.at))):
		}
		if err := f.do(); err != nil {
			return err
		}
	}
	return nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}

func engineName(r *run) string {
	if r.dbURL != "" {
		return "PostgreSQL"
	}
	return "SQLite"
}

// writeSamples writes every sample as TSV.
func (r *run) writeSamples(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintln(f, "t_s\tlife\trss_bytes\tpeak_bytes\tthreads\tfds\tcpu_ticks")
	for _, s := range r.sampler.proc {
		fmt.Fprintf(f, "%.1f\t%d\t%.0f\t%.0f\t%d\t%d\t%d\n", s.At.Sub(r.start).Seconds(), s.Life, s.RSS, s.HWM, s.Threads, s.FDs, s.CPU)
	}
	fmt.Fprintln(f, "\nt_s\tlife\theap_bytes\tgoroutines\twal_main_bytes\twal_telemetry_bytes\tload1\tgo_held_bytes\trss_bytes")
	for _, m := range r.sampler.metrics {
		fmt.Fprintf(f, "%.1f\t%d\t%.0f\t%.0f\t%d\t%d\t%.2f\t%.0f\t%.0f\n", m.At.Sub(r.start).Seconds(), m.Life, m.Heap, m.Goroutines, m.WALMain, m.WALTelem, m.Load1, m.GoHeld, m.RSS)
	}
	return nil
}
