//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A lock held for an instant by another open file description (a child
// forked between its fork and its exec holds the released server's copy)
// is waited out; one held for good is refused, naming its holder.
func TestLockDataDirWaitsOutABriefHolder(t *testing.T) {
	for _, tc := range []struct {
		name    string
		holdFor time.Duration // 0: for the whole test
		wantErr string
	}{
		{name: "released at once", holdFor: 150 * time.Millisecond},
		{name: "held", wantErr: "is in use by another wnms serve (pid 4242)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "wnms.lock")
			if err := os.WriteFile(path, []byte("4242\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			holder, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			if err := syscall.Flock(int(holder.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
				t.Fatal(err)
			}
			// The holder lets go from another goroutine, which must be
			// done before the test closes the file.
			fd, released := int(holder.Fd()), make(chan struct{})
			defer func() { <-released }()
			if tc.holdFor > 0 {
				time.AfterFunc(tc.holdFor, func() {
					syscall.Flock(fd, syscall.LOCK_UN)
					close(released)
				})
			} else {
				close(released)
			}
			release, err := lockDataDir(dir)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("lockDataDir: %v", err)
				}
				release()
				return
			}
			if err == nil {
				release()
				t.Fatal("locked a directory another holder has")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want %q", err, tc.wantErr)
			}
		})
	}
}
