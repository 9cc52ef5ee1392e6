package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wnms/wnms/internal/store"
)

// Version and Build identify this binary; Build may be set with -ldflags.
var (
	Version = "1.0.0"
	Build   = "dev"
)

// envName is the environment twin of a flag: --database-url is
// WNMS_DATABASE_URL.
func envName(flagName string) string {
	return "WNMS_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseFlags parses args; a flag not given takes its environment twin when
// that is set. Command-line beats environment beats default.
func parseFlags(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		if v := getenv(envName(f.Name)); v != "" {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", envName(f.Name), v, e)
			}
		}
	})
	return err
}

// storeFlags are the flags that say where the store is.
type storeFlags struct {
	data        string
	databaseURL string
}

func (sf *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.data, "data", "wnms-data", "data directory: SQLite store, bootstrap key, backups, TLS files")
	fs.StringVar(&sf.databaseURL, "database-url", "", "PostgreSQL URL (postgres://...); empty = embedded SQLite in --data")
}

func (sf *storeFlags) open(ctx context.Context) (*store.Store, error) {
	return store.Open(ctx, store.Config{DatabaseURL: sf.databaseURL, DataDir: sf.data})
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("wnms "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
