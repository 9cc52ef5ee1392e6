// Command wnms is the wireless network management server: one binary with
// the subcommands serve, apikey, migrate, backup, simulate and version.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr), os.Stderr))
}

// exitCode reports err and turns it into the exit status: 0 for success or
// help, 2 for a mistake in how wnms was called, 1 for anything else.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "wnms:", err)
		return 2
	}
	fmt.Fprintln(stderr, "wnms:", err)
	return 1
}

const usage = `usage: wnms <command> [flags]

commands:
  serve                     run the server (API on --listen, analytics on --analytics-listen)
  apikey create --login NAME --role ROLE [--customer ID] [--cluster-parent]
                            create an API user if needed and a key for it; prints {"keyId","keyValue"}
  apikey list               list keys (never their values)
  apikey revoke KEYID       revoke a key and end its sessions
  migrate                   apply pending schema migrations and exit
  backup                    write a consistent copy of the SQLite store to <data>/backups
  simulate --key-id ID --key-value V [--live] [--incident KIND@AGO]
                            drive a server with a simulated network of sites, APs and clients
  version                   print the version and the commit it was built from

Every flag has an environment twin: --database-url is WNMS_DATABASE_URL, and so on.
Run "wnms <command> -h" for the flags of a command.
`

// run is the whole program, so tests can boot the real server in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usagef("no command given")
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], getenv, stdout, stderr, nil)
	case "apikey":
		return runAPIKey(ctx, args[1:], getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, args[1:], getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, args[1:], getenv, stdout, stderr)
	case "simulate":
		return runSimulate(ctx, args[1:], getenv, stdout, stderr)
	case "version", "--version", "-v":
		c := newCommand("version", "", "Prints the version of this binary.", stdout, stderr)
		if err := c.parse(args[1:], getenv, 0); err != nil {
			return err
		}
		fmt.Fprint(stdout, versionLine())
		return nil
	case "help", "-h", "--help":
		if len(args) > 1 && args[1] != "help" && !strings.HasPrefix(args[1], "-") {
			// wnms help serve = wnms serve --help (and apikey create, ...).
			return run(ctx, append(args[1:len(args):len(args)], "--help"), getenv, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usagef("unknown command %q", args[0])
}
