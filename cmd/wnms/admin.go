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

func runAPIKey(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("apikey: say create, list or revoke")
	}
	fs := newFlagSet("apikey "+args[0], stderr)
	var sf storeFlags
	sf.register(fs)
	login := fs.String("login", "", "login id of the API user (created if it does not exist)")
	role := fs.String("role", "", "role of a new API user: VIEWER, OPERATOR, POWERUSER, ADMINISTRATOR, SUPERUSER")
	customer := fs.Int64("customer", wnms.OnPremCustomer, "customer id of a new API user (cloud accounts)")
	keyID := fs.String("key-id", "", "key id to revoke")
	if err := parseFlags(fs, args[1:], getenv); err != nil {
		return err
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	secret, err := auth.LoadSecret(ctx, st)
	if err != nil {
		return err
	}
	a := auth.NewService(st, secret)
	enc := json.NewEncoder(stdout)
	switch args[0] {
	case "create":
		if *login == "" {
			return fmt.Errorf("apikey create: --login is required")
		}
		u, err := auth.EnsureAPIUser(ctx, st, *login, *role, *customer)
		if err != nil {
			return err
		}
		k, value, err := a.NewKey(ctx, u)
		if err != nil {
			return err
		}
		return enc.Encode(map[string]any{"keyId": k.KeyID, "keyValue": value, "userId": u.UserID, "loginId": u.LoginID})
	case "list":
		ks, err := st.APIKeys(ctx, 0)
		if err != nil {
			return err
		}
		return enc.Encode(ks)
	case "revoke":
		id := *keyID
		if id == "" && fs.NArg() > 0 {
			id = fs.Arg(0)
		}
		if id == "" {
			return fmt.Errorf("apikey revoke: give the key id")
		}
		if err := st.DeleteAPIKey(ctx, 0, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", id)
		return nil
	}
	return fmt.Errorf("apikey: unknown action %q (create, list, revoke)", args[0])
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", stderr)
	var sf storeFlags
	sf.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "%s store is at the current schema\n", st.Dialect())
	return nil
}

func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backup", stderr)
	var sf storeFlags
	sf.register(fs)
	if err := parseFlags(fs, args, getenv); err != nil {
		return err
	}
	if sf.databaseURL != "" {
		return fmt.Errorf("backup copies the embedded SQLite store; for PostgreSQL use pg_dump")
	}
	st, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	dir := filepath.Join(sf.data, "backups")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	path := filepath.Join(dir, "wnms-"+time.Now().UTC().Format("20060102-150405.000")+".db")
	if err := st.Backup(ctx, path); err != nil {
		return err
	}
	fmt.Fprintln(stdout, path)
	return nil
}
