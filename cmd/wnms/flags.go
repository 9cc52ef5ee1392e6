package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/store"
)

// errHelp says that help was asked for and printed: the command succeeds.
var errHelp = errors.New("help printed")

// usageError is a mistake in how the command was called: the program
// exits 2 after saying what was wrong.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// envName is the environment twin of a flag: --database-url is
// WNMS_DATABASE_URL.
func envName(flagName string) string {
	return "WNMS_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// command is one subcommand's flags and how to explain them.
type command struct {
	fs      *flag.FlagSet
	name    string // "serve", "apikey create", ...
	args    string // what follows the flags in the usage line, "" for nothing
	summary string
	stdout  io.Writer
	// fromEnv names the environment variable each flag took its value
	// from, for flags set that way.
	fromEnv map[string]string
}

func newCommand(name, args, summary string, stdout, stderr io.Writer) *command {
	fs := flag.NewFlagSet("wnms "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors and help are ours to print
	return &command{fs: fs, name: name, args: args, summary: summary, stdout: stdout, fromEnv: map[string]string{}}
}

// usage is the command's help: what it does, then each flag with its
// environment twin and default.
func (c *command) usage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: wnms %s [flags]", c.name)
	if c.args != "" {
		b.WriteString(" " + c.args)
	}
	fmt.Fprintf(&b, "\n\n%s\n", c.summary)
	n := 0
	c.fs.VisitAll(func(f *flag.Flag) { n++ })
	if n > 0 {
		b.WriteString("\nflags (each also set by its environment variable; the flag wins):\n")
	}
	c.fs.VisitAll(func(f *flag.Flag) {
		fmt.Fprintf(&b, "  --%s  (%s)\n      %s", f.Name, envName(f.Name), f.Usage)
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" {
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteString("\n")
	})
	return b.String()
}

var invalidValue = regexp.MustCompile(`^invalid value "(.*)" for flag -(\S+): `)

// parse parses args (help: printed to stdout, errHelp); a flag not given
// takes its environment twin when that is set. Command line beats
// environment beats default. At most maxArgs arguments may follow the
// flags. Every mistake names the flag or variable, the bad value and what
// is expected.
func (c *command) parse(args []string, getenv func(string) string, maxArgs int) error {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(c.stdout, c.usage())
			return errHelp
		}
		if m := invalidValue.FindStringSubmatch(err.Error()); m != nil {
			if f := c.fs.Lookup(m[2]); f != nil && !basicFlag(f) {
				return usagef("%s", strings.TrimPrefix(err.Error(), m[0])) // the flag's own explanation
			}
			return usagef("--%s %q: expected %s", m[2], m[1], c.expected(m[2]))
		}
		return usagef("%s: %v (wnms %s -h lists the flags)", c.name, err, c.name)
	}
	given := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	c.fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		env := envName(f.Name)
		if v := getenv(env); v != "" {
			if c.fs.Set(f.Name, v) != nil {
				err = usagef("%s=%q: expected %s", env, v, c.expected(f.Name))
				return
			}
			c.fromEnv[f.Name] = env
		}
	})
	if err != nil {
		return err
	}
	if err := c.finite(); err != nil {
		return err
	}
	if c.fs.NArg() > maxArgs {
		return usagef("%s: unexpected argument %q (wnms %s -h shows the usage)", c.name, c.fs.Arg(maxArgs), c.name)
	}
	return nil
}

// finite refuses a number flag set to NaN or an infinity, which Go's flag
// parsing accepts ("NaN", "Inf", "-infinity") and every range check then
// lets through, since any comparison with NaN is false.
func (c *command) finite() error {
	var err error
	c.fs.VisitAll(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if v, ok := g.Get().(float64); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = usagef("%s %s: expected a finite number (%s)", c.origin(f.Name), f.Value.String(), f.Usage)
		}
	})
	return err
}

// basicFlag says whether f holds a plain value (text, number, switch or
// duration), whose parse errors say nothing more than "bad value".
func basicFlag(f *flag.Flag) bool {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	switch g.Get().(type) {
	case bool, int, int64, uint, uint64, float64, string, time.Duration:
		return true
	}
	return false
}

// expected says what kind of value a flag takes.
func (c *command) expected(name string) string {
	f := c.fs.Lookup(name)
	if f == nil {
		return "a value"
	}
	switch f.Value.(flag.Getter).Get().(type) {
	case bool:
		return "true or false"
	case int, int64, uint, uint64:
		return "a whole number (" + f.Usage + ")"
	case time.Duration:
		return "a duration such as 30s or 2m"
	}
	return f.Usage
}

// origin names where a flag's value came from, for error messages:
// "--log-level", or "WNMS_LOG_LEVEL" when the environment set it.
func (c *command) origin(name string) string {
	if env, ok := c.fromEnv[name]; ok {
		return env
	}
	return "--" + name
}

// storeFlags are the flags that say where the store is.
type storeFlags struct {
	data        string
	databaseURL string
	synchronous string
	cacheMiB    int
	maxConns    int
}

func (sf *storeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&sf.data, "data", "wnms-data", "data directory: SQLite store, bootstrap key, backups, TLS files")
	fs.StringVar(&sf.databaseURL, "database-url", "", "PostgreSQL URL (postgres://...); empty = embedded SQLite in --data")
	fs.IntVar(&sf.maxConns, "database-max-conns", store.DefaultMaxConns, "PostgreSQL connections this process opens (all of them at start); size it so that every replica's, plus one each, fit in PostgreSQL's max_connections")
	fs.IntVar(&sf.cacheMiB, "sqlite-cache-mib", store.DefaultCacheMiB, "SQLite page cache, in MiB: one pool set aside at start, shared by every SQLite connection, so that idle hours do not make the next read cold")
	fs.StringVar(&sf.synchronous, "sqlite-synchronous", "normal", "SQLite durability: normal (survives a crash of wnms; the last commits may be lost on power loss) or full (survives power loss; slower writes)")
}

// open opens the store; with mustExist (the commands that administer a
// store: apikey, migrate, backup) it refuses to create one where --data or
// --database-url points by mistake. Only serve creates a store.
func (sf *storeFlags) open(ctx context.Context, mustExist bool) (*store.Store, error) {
	st, err := store.Open(ctx, store.Config{DatabaseURL: sf.databaseURL, DataDir: sf.data, Synchronous: sf.synchronous,
		CacheMiB: sf.cacheMiB, MaxConns: sf.maxConns, MustExist: mustExist, Serving: !mustExist})
	return st, explainSchemaTooNew(err, sf.databaseURL != "")
}

// validate checks the store flags, each mistake a usage error (exit 2)
// naming the flag (or its environment twin).
func (sf *storeFlags) validate(cmd *command) error {
	if sf.maxConns < store.MinMaxConns || sf.maxConns > store.MaxMaxConns {
		return usagef("%s %d: must be %d to %d", cmd.origin("database-max-conns"), sf.maxConns, store.MinMaxConns, store.MaxMaxConns)
	}
	return nil
}

// openAuth opens the store (open) and the authentication service over
// it, keyed by the server secret kept in the store. The caller closes the
// store.
func (sf *storeFlags) openAuth(ctx context.Context, mustExist bool) (*store.Store, *auth.Service, error) {
	st, err := sf.open(ctx, mustExist)
	if err != nil {
		return nil, nil, err
	}
	secret, err := auth.LoadSecret(ctx, st)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, auth.NewService(st, secret), nil
}
