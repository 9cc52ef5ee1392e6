package main

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/wnms/wnms/internal/store"
)

// Version and Commit identify this binary. A release build sets both
// (scripts/release.sh does):
//
//	go build -ldflags "-X main.Version=1.2.0 -X main.Commit=$(git rev-parse HEAD)" ./cmd/wnms
//
// A plain go build leaves them empty and init fills them in from what
// the Go toolchain records in the binary: the module's version (a tag,
// or a pseudo-version naming the commit) and the VCS revision, with
// "-modified" when the work tree had uncommitted changes. A binary built
// without either (go run, a test binary, a copy without .git) says
// "devel" and "unknown".
var (
	Version string
	Commit  string
)

func init() {
	bi, _ := debug.ReadBuildInfo()
	Version, Commit = resolveVersion(Version, Commit, bi)
}

// resolveVersion returns the version and commit to show: the stamped
// ones where set, else those of the build info bi (which may be nil).
func resolveVersion(version, commit string, bi *debug.BuildInfo) (string, string) {
	if bi != nil && version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
	if bi != nil && commit == "" {
		var rev string
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" && modified {
			rev += "-modified"
		}
		commit = rev
	}
	if version == "" {
		version = "devel"
	}
	if commit == "" {
		commit = "unknown"
	}
	return version, commit
}

// versionLine is what `wnms version` prints.
func versionLine() string {
	return fmt.Sprintf("wnms %s (commit %s, %s, %s/%s)\n", Version, Commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// explainSchemaTooNew adds to the store's refusal of a schema newer than
// this binary (a downgrade) what to do about it; other errors pass as
// they are. The store refuses before it changes anything.
func explainSchemaTooNew(err error, postgres bool) error {
	if !errors.Is(err, store.ErrSchemaTooNew) {
		return err
	}
	restore := "restore the SQLite backup taken before the upgrade (wnms backup wrote it to <data>/backups)"
	if postgres {
		restore = "restore the pg_dump taken before the upgrade"
	}
	return fmt.Errorf("%w.\nThis wnms (version %s) is older than the wnms that last migrated this store, and a store is never migrated back. "+
		"Nothing was changed. Run the newer wnms again, or, to go back to version %s, stop every wnms on this store and %s", err, Version, Version, restore)
}
