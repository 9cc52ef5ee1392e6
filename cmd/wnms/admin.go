package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/wnms"
)

const apikeyUsage = `usage: wnms apikey <action> [flags]

actions:
  create --login NAME --role ROLE [--customer ID] [--cluster-parent]
            create the API user if needed and a new key for it; prints {"keyId","keyValue",...} once;
            --cluster-parent makes the key a cluster parent's, the only kind whose calls may act
            for the parent's users
  list      list the keys of every customer (never their values)
  revoke KEYID
            revoke a key and end its sessions

Run "wnms apikey <action> -h" for the flags of an action. The commands work beside a
running server on the same data directory or database.
`

// runAPIKey is wnms apikey create|list|revoke: key administration from the
// command line, each action with its own flags.
func runAPIKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, apikeyUsage)
		return usagef("apikey: say create, list or revoke")
	}
	var (
		cmd              *command
		login, role      string
		customer         int64
		clusterParent    bool
		keyID            string
		maxArgs          int
		action, restArgs = args[0], args[1:]
	)
	switch action {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, apikeyUsage)
		return errHelp
	case "create":
		cmd = newCommand("apikey create", "", "Creates the API user --login (with --role and --customer) if it does not exist, and a new key for it.\nPrints the key as JSON; its value is shown this once and only its hash is stored.", stdout, stderr)
		cmd.fs.StringVar(&login, "login", "", "login id of the API user (created if it does not exist)")
		cmd.fs.StringVar(&role, "role", "", "role of a new API user: VIEWER, OPERATOR, POWERUSER, ADMINISTRATOR or SUPERUSER")
		cmd.fs.Int64Var(&customer, "customer", wnms.OnPremCustomer, "customer id of a new API user (cloud accounts)")
		cmd.fs.BoolVar(&clusterParent, "cluster-parent", false, "make the key for a cluster parent: put it in the parent's --cluster-config; only its sessions may send X-Wnms-Acting-For and X-Wnms-Role-Cap, which forward calls for the parent's users")
	case "list":
		cmd = newCommand("apikey list", "", "Lists the API keys of every customer as JSON: key id, user, customer, created and last used. Never their values.", stdout, stderr)
	case "revoke":
		// The key to revoke is the argument only: no flag or environment
		// variable (WNMS_KEY_ID is the simulator's key) may choose what a
		// destructive command destroys.
		cmd = newCommand("apikey revoke", "KEYID", "Revokes the key KEYID and ends every session opened with it.", stdout, stderr)
		maxArgs = 1
	default:
		fmt.Fprint(stderr, apikeyUsage)
		return usagef("apikey: unknown action %q (create, list or revoke)", action)
	}
	var sf storeFlags
	sf.register(cmd.fs)
	if err := cmd.parse(restArgs, getenv, maxArgs); err != nil {
		return err
	}
	if err := sf.validate(cmd); err != nil {
		return err
	}
	switch {
	case action == "create" && login == "":
		return usagef("apikey create: --login is required")
	case action == "revoke":
		if keyID = cmd.fs.Arg(0); keyID == "" {
			return usagef("apikey revoke: give the key id to revoke as the argument")
		}
	}
	st, a, err := sf.openAuth(ctx, true)
	if err != nil {
		return err
	}
	defer st.Close()
	enc := json.NewEncoder(stdout)
	switch action {
	case "create":
		command := "wnms apikey create --login " + login
		if clusterParent {
			command += " --cluster-parent"
		}
		// The API user, when the command creates it, has a record of its own.
		u, err := auth.EnsureAPIUser(cliAudit(ctx, getenv, customer, "users", "", command), st, login, role, customer)
		ctx := cliAudit(ctx, getenv, customer, "apikeys", "", command)
		if err != nil {
			return err
		}
		newKey := a.NewKey
		if clusterParent {
			newKey = a.NewClusterParentKey
		}
		k, value, err := newKey(ctx, u)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]any{"keyId": k.KeyID, "keyValue": value, "userId": u.UserID, "loginId": u.LoginID,
			"clusterParent": k.ClusterParent})
	case "list":
		ks, err := st.APIKeys(ctx, 0)
		if err != nil {
			return err
		}
		return enc.Encode(ks)
	}
	k, err := st.APIKey(ctx, keyID)
	if err != nil {
		return err
	}
	if err := st.DeleteAPIKey(cliAudit(ctx, getenv, k.CustomerID, "apikeys", keyID, "wnms apikey revoke "+keyID), 0, keyID); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "revoked %s\n", keyID)
	return nil
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand("migrate", "", "Applies the pending schema migrations to the store and exits (serve also does this at start).", stdout, stderr)
	var sf storeFlags
	sf.register(cmd.fs)
	if err := cmd.parse(args, getenv, 0); err != nil {
		return err
	}
	if err := sf.validate(cmd); err != nil {
		return err
	}
	st, err := sf.open(ctx, true)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "%s store is at the current schema\n", st.Dialect())
	return nil
}

func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := newCommand("backup", "", "Writes a consistent copy of the embedded SQLite store (wnms.db and its telemetry file) to <data>/backups and prints the paths.\nFor PostgreSQL, use pg_dump.", stdout, stderr)
	var sf storeFlags
	sf.register(cmd.fs)
	if err := cmd.parse(args, getenv, 0); err != nil {
		return err
	}
	if err := sf.validate(cmd); err != nil {
		return err
	}
	if sf.databaseURL != "" {
		return fmt.Errorf("backup copies the embedded SQLite store; for PostgreSQL use pg_dump")
	}
	st, err := sf.open(ctx, true)
	if err != nil {
		return err
	}
	defer st.Close()
	dir := filepath.Join(sf.data, "backups")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, "wnms-"+time.Now().UTC().Format("20060102-150405.000")+".db")
	paths, err := st.Backup(ctx, path)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintln(stdout, p)
	}
	return nil
}

// cliAudit returns ctx carrying the audit record of a command-line change:
// via "cli", by the operating-system user that ran it, with the command as
// its path: its action and target only, never the store's flags (a
// database URL may hold a password).
func cliAudit(ctx context.Context, getenv func(string) string, customerID int64, resourceType, resourceID, command string) context.Context {
	who := getenv("SUDO_USER")
	if who == "" {
		who = getenv("USER")
	}
	if who == "" {
		who = "unknown"
	}
	e := wnms.NewAuditEntry(wnms.AuditRecord{
		CustomerID:   customerID,
		Actor:        wnms.AuditActor{LoginID: who, Via: "cli"},
		Method:       "CLI",
		Path:         command,
		ResourceType: resourceType,
		ResourceID:   resourceID,
		Status:       200,
	})
	return wnms.WithAudit(ctx, e)
}
