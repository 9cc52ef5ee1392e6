package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/wnms/wnms/internal/wnms"
)

const userColumns = `u.id, u.customer_id, u.login_id, u.first_name, u.last_name, u.email, u.role, u.user_type,
	u.time_zone, u.tz_offset, u.font_pref, u.passwd_settings, u.logout_interval, u.allowed_locations,
	u.allow_access_mgmt, u.allow_security_mgmt, u.service_user, u.default_password, u.password_change_enforced,
	u.user_defined_fields, u.password_set_at, u.manual_lock, u.locked_until, u.failed_logins, c.locked`

const userFrom = ` FROM users u JOIN customers c ON c.id = u.customer_id`

type scanner interface{ Scan(...any) error }

func scanUser(sc scanner, extra ...any) (*wnms.User, error) {
	var u wnms.User
	var passwd, allowed string
	var udf sql.NullString
	dest := []any{&u.UserID, &u.CustomerID, &u.LoginID, &u.FirstName, &u.LastName, &u.Email, &u.Role, &u.UserType,
		&u.TimeZone, &u.TimeZoneOffsetInMins, &u.FontPref, &passwd, &u.LogoutInterval, &allowed,
		&u.AllowAccessMgmt, &u.AllowSecurityMgmt, &u.ServiceOrSupportUser, &u.DefaultPassword, &u.PasswordChangeEnforced,
		&udf, &u.PasswordSetAt, &u.ManualLock, &u.LockedUntil, &u.FailedLogins, &u.CustomerLocked}
	if err := sc.Scan(append(dest, extra...)...); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(passwd), &u.PasswdSettings); err != nil {
		return nil, fmt.Errorf("user %d passwd_settings: %w", u.UserID, err)
	}
	if err := json.Unmarshal([]byte(allowed), &u.AllowedLocations); err != nil {
		return nil, fmt.Errorf("user %d allowed_locations: %w", u.UserID, err)
	}
	if udf.Valid {
		if err := json.Unmarshal([]byte(udf.String), &u.UserDefinedFields); err != nil {
			return nil, fmt.Errorf("user %d user_defined_fields: %w", u.UserID, err)
		}
	}
	return &u, nil
}

func userArgs(u *wnms.User) ([]any, error) {
	passwd, err := json.Marshal(u.PasswdSettings)
	if err != nil {
		return nil, err
	}
	allowed := u.AllowedLocations
	if allowed == nil {
		allowed = []wnms.LocationID{}
	}
	al, err := json.Marshal(allowed)
	if err != nil {
		return nil, err
	}
	var udf any
	if u.UserDefinedFields != nil {
		b, err := json.Marshal(u.UserDefinedFields)
		if err != nil {
			return nil, err
		}
		udf = string(b)
	}
	return []any{u.LoginID, u.FirstName, u.LastName, u.Email, string(u.Role), u.UserType,
		u.TimeZone, u.TimeZoneOffsetInMins, u.FontPref, string(passwd), u.LogoutInterval, string(al),
		u.AllowAccessMgmt, u.AllowSecurityMgmt, u.ServiceOrSupportUser, u.DefaultPassword, u.PasswordChangeEnforced,
		udf, u.ManualLock, u.LockedUntil}, nil
}

// Users lists the users of a customer, ordered by id.
func (s *Store) Users(ctx context.Context, customerID int64) ([]wnms.User, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+userColumns+userFrom+` WHERE u.customer_id = $1 ORDER BY u.id`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.User{}
	now := s.Now()
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, err
		}
		u.Derive(now)
		out = append(out, *u)
	}
	return out, rows.Err()
}

// User reads one user of a customer; customerID 0 matches any customer.
// It returns RESOURCE_NOT_FOUND when there is no such user.
func (s *Store) User(ctx context.Context, customerID, userID int64) (*wnms.User, error) {
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+userFrom+
		` WHERE u.id = $1 AND ($2 = 0 OR u.customer_id = $2)`, userID, customerID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, wnms.NotFound("no user %d", userID)
	}
	if err != nil {
		return nil, err
	}
	u.Derive(s.Now())
	return u, nil
}

// UserByLogin reads a user by login id (case-insensitive) with its
// password hash. It returns RESOURCE_NOT_FOUND when there is none.
func (s *Store) UserByLogin(ctx context.Context, loginID string) (*wnms.User, string, error) {
	var hash string
	u, err := scanUser(s.r.QueryRowContext(ctx, `SELECT `+userColumns+`, u.password_hash`+userFrom+
		` WHERE lower(u.login_id) = lower($1)`, loginID), &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", wnms.NotFound("no user %q", loginID)
	}
	if err != nil {
		return nil, "", err
	}
	u.Derive(s.Now())
	return u, hash, nil
}

// PasswordHash returns the stored password hash of a user ("" if none).
func (s *Store) PasswordHash(ctx context.Context, userID int64) (string, error) {
	var h string
	err := s.r.QueryRowContext(ctx, `SELECT password_hash FROM users WHERE id = $1`, userID).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", wnms.NotFound("no user %d", userID)
	}
	return h, err
}

// CreateUser stores a new user with a password hash ("" for none) and sets
// u.UserID. A taken loginId is DUPLICATE_ENTITY.
func (s *Store) CreateUser(ctx context.Context, u *wnms.User, passwordHash string) error {
	args, err := userArgs(u)
	if err != nil {
		return err
	}
	now := s.nowMS()
	args = append(args, u.CustomerID, passwordHash, now, now)
	err = s.tx(ctx, func(tx *sql.Tx) error {
		u.UserID = 0 // set by this run alone
		defer func() {
			if u.UserID != 0 {
				auditCreated(ctx, u.UserID)
				auditChange(ctx, u.LoginID, nil, auditUser(u, setOrNot(passwordHash)))
			}
		}()
		return tx.QueryRowContext(ctx, `INSERT INTO users (id, login_id, first_name, last_name, email, role, user_type,
		time_zone, tz_offset, font_pref, passwd_settings, logout_interval, allowed_locations,
		allow_access_mgmt, allow_security_mgmt, service_user, default_password, password_change_enforced,
		user_defined_fields, manual_lock, locked_until, customer_id, password_hash, password_set_at, created_at)
		VALUES (`+newUserID(s.dialect)+`, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24)
		RETURNING id`, args...).Scan(&u.UserID)
	})
	if isUnique(err) {
		return wnms.Errorf(wnms.DuplicateEntity, "loginId %q is taken", u.LoginID)
	}
	if isForeignKey(err) {
		return wnms.RuleBroken("no customer %d", u.CustomerID)
	}
	return err
}

// updateUser writes every stored field of u. Clearing the lock also resets
// the failed-login count; a manual lock ends the user's sessions at once.
func updateUser(ctx context.Context, tx *sql.Tx, u *wnms.User, args []any) error {
	res, err := tx.ExecContext(ctx, `UPDATE users SET login_id = $1, first_name = $2, last_name = $3, email = $4,
		role = $5, user_type = $6, time_zone = $7, tz_offset = $8, font_pref = $9, passwd_settings = $10,
		logout_interval = $11, allowed_locations = $12, allow_access_mgmt = $13, allow_security_mgmt = $14,
		service_user = $15, default_password = $16, password_change_enforced = $17, user_defined_fields = $18,
		manual_lock = $19, locked_until = $20,
		failed_logins = CASE WHEN CAST($19 AS BOOLEAN) OR CAST($20 AS BIGINT) > 0 THEN failed_logins ELSE 0 END
		WHERE id = $21 AND customer_id = $22`, args...)
	if isUnique(err) {
		return wnms.Errorf(wnms.DuplicateEntity, "loginId %q is taken", u.LoginID)
	}
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return wnms.NotFound("no user %d", u.UserID)
	}
	if u.ManualLock {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, u.UserID); err != nil {
			return err
		}
	}
	return nil
}

// ModifyUser changes user userID of the customer in one transaction: it
// reads the user, locked until the transaction ends, lets edit make the
// new user of it (reading locations and custom fields through in, inside
// the transaction), and writes that back, so that two concurrent edits of
// one user apply one after the other and neither is lost. passwordHash,
// when not "", becomes the user's password as SetPassword does (ending all
// of its sessions); a passwordChangeEnforced the edit sets stays set. An
// error from edit is returned as is and nothing changes.
func (s *Store) ModifyUser(ctx context.Context, customerID, userID int64, passwordHash string,
	edit func(old *wnms.User, in wnms.UserReads) (*wnms.User, error)) (*wnms.User, error) {
	err := s.authTx(ctx, wnms.AuthEvent{User: userID}, func(tx *sql.Tx) error {
		old, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+userFrom+
			` WHERE u.id = $1 AND u.customer_id = $2`+forUpdate(s.dialect, "u"), userID, customerID))
		if errors.Is(err, sql.ErrNoRows) {
			return wnms.NotFound("no user %d", userID)
		}
		if err != nil {
			return err
		}
		old.Derive(s.Now())
		u, err := edit(old, txReads{d: s.dialect, q: tx})
		if err != nil {
			return err
		}
		u.UserID, u.CustomerID = old.UserID, old.CustomerID
		args, err := userArgs(u)
		if err != nil {
			return err
		}
		if err := updateUser(ctx, tx, u, append(args, u.UserID, u.CustomerID)); err != nil {
			return err
		}
		// A new password shows as a change of "password" (masked), whatever
		// the hashes.
		oldPw, newPw := "", ""
		if passwordHash != "" {
			oldPw, newPw = "old", "new"
		}
		after := *u
		after.Derive(s.Now())
		auditChange(ctx, u.LoginID, auditUser(old, oldPw), auditUser(&after, newPw))
		if passwordHash == "" {
			return nil
		}
		if err := s.setPassword(ctx, tx, userID, passwordHash, ""); err != nil {
			return err
		}
		if u.PasswordChangeEnforced {
			_, err = tx.ExecContext(ctx, `UPDATE users SET password_change_enforced = $1 WHERE id = $2`, true, userID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.User(ctx, customerID, userID)
}

// SetPassword stores a new password hash, clears passwordChangeEnforced and
// moves the expiry date by the user's interval when expiry is on. It ends
// every session of the user except keep (the token hash of the session
// that changed its own password, or "" to end them all), which is no
// longer restricted to changing the password.
func (s *Store) SetPassword(ctx context.Context, userID int64, hash, keep string) error {
	return s.authTx(ctx, wnms.AuthEvent{User: userID}, func(tx *sql.Tx) error {
		return s.setPassword(ctx, tx, userID, hash, keep)
	})
}

func (s *Store) setPassword(ctx context.Context, tx *sql.Tx, userID int64, hash, keep string) error {
	var raw, login string
	err := tx.QueryRowContext(ctx, `SELECT passwd_settings, login_id FROM users WHERE id = $1`, userID).Scan(&raw, &login)
	if errors.Is(err, sql.ErrNoRows) {
		return wnms.NotFound("no user %d", userID)
	}
	if err != nil {
		return err
	}
	var ps wnms.PasswdSettings
	if err := json.Unmarshal([]byte(raw), &ps); err != nil {
		return fmt.Errorf("user %d passwd_settings: %w", userID, err)
	}
	now := s.nowMS()
	if ps.PasswordExpires && ps.PasswordExpiryDaysInterval > 0 {
		ps.PasswordExpiryDateTime = now + ps.PasswordExpiryDaysInterval*86400*1000
	}
	b, _ := json.Marshal(ps)
	_, err = tx.ExecContext(ctx, `UPDATE users SET password_hash = $1, password_set_at = $2, passwd_settings = $3,
		password_change_enforced = $4, default_password = $4 WHERE id = $5`, hash, now, string(b), false, userID)
	if err != nil {
		return err
	}
	if e := wnms.AuditFrom(ctx); e != nil && e.Record().ResourceName == "" {
		// A password changed on its own (ModifyUser records the user's
		// whole change before it comes here).
		auditChange(ctx, login, map[string]any{"password": "old"}, map[string]any{"password": "new"})
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1 AND token_hash <> $2`, userID, keep); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE sessions SET password_change = $1 WHERE token_hash = $2`, false, keep)
	return err
}

// DeleteUser removes a user of a customer, with its keys and sessions.
func (s *Store) DeleteUser(ctx context.Context, customerID, userID int64) error {
	return s.authTx(ctx, wnms.AuthEvent{User: userID}, func(tx *sql.Tx) error {
		old, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+userFrom+
			` WHERE u.id = $1 AND u.customer_id = $2`, userID, customerID))
		if errors.Is(err, sql.ErrNoRows) {
			return wnms.NotFound("no user %d", userID)
		}
		if err != nil {
			return err
		}
		old.Derive(s.Now())
		auditChange(ctx, old.LoginID, auditUser(old, ""), nil)
		res, err := tx.ExecContext(ctx, `DELETE FROM users WHERE id = $1 AND customer_id = $2`, userID, customerID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return wnms.NotFound("no user %d", userID)
		}
		return nil
	})
}

// ReserveGuess counts a credential guess against a user before it is
// judged, in one atomic step: it fails (ok false) when the user is locked
// at now or already holds max failed guesses, so that no more than max
// guesses are ever judged before the lock, whatever the concurrency. n is
// the guess's number; a right guess clears the count (LoginSucceeded), a
// wrong one stays counted, and the max-th locks the user (LockUser).
func (s *Store) ReserveGuess(ctx context.Context, userID int64, max int) (n int, ok bool, err error) {
	err = s.w.QueryRowContext(ctx, `UPDATE users SET failed_logins = failed_logins + 1
		WHERE id = $1 AND failed_logins < $2 AND locked_until <= $3 AND NOT manual_lock
		AND NOT (SELECT locked FROM customers WHERE id = users.customer_id)
		RETURNING failed_logins`, userID, max, s.nowMS()).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	return n, err == nil, err
}

// LockUser locks a user until until (ms), clears its failed guesses and
// ends its sessions at once.
func (s *Store) LockUser(ctx context.Context, userID int64, until int64) error {
	return s.authTx(ctx, wnms.AuthEvent{User: userID}, func(tx *sql.Tx) error {
		var login string
		var was int64
		if err := tx.QueryRowContext(ctx, `SELECT login_id, locked_until FROM users WHERE id = $1`, userID).Scan(&login, &was); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET locked_until = $1, failed_logins = 0 WHERE id = $2`, until, userID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = $1`, userID); err != nil {
			return err
		}
		return s.auditAlso(ctx, tx, "users", strconv.FormatInt(userID, 10), login,
			map[string]int64{"lockedUntil": was}, map[string]int64{"lockedUntil": until})
	})
}

// LoginSucceeded resets the failed-login count of a user.
func (s *Store) LoginSucceeded(ctx context.Context, userID int64) error {
	_, err := s.w.ExecContext(ctx, `UPDATE users SET failed_logins = 0 WHERE id = $1 AND failed_logins <> 0`, userID)
	return err
}

// CustomFields lists the custom user fields of a customer.
func (s *Store) CustomFields(ctx context.Context, customerID int64) ([]wnms.CustomField, error) {
	return customFields(ctx, s.r, customerID)
}

func customFields(ctx context.Context, q querier, customerID int64) ([]wnms.CustomField, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM custom_fields WHERE customer_id = $1 ORDER BY id`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.CustomField{}
	for rows.Next() {
		var f wnms.CustomField
		if err := rows.Scan(&f.ID, &f.Name); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// CreateCustomField defines a custom user field; a taken name is
// DUPLICATE_ENTITY.
func (s *Store) CreateCustomField(ctx context.Context, customerID int64, name string) (*wnms.CustomField, error) {
	f := &wnms.CustomField{Name: name}
	err := s.tx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO custom_fields (customer_id, name) VALUES ($1, $2) RETURNING id`,
			customerID, name).Scan(&f.ID)
		auditChange(ctx, name, nil, f)
		return err
	})
	if isUnique(err) {
		return nil, wnms.Errorf(wnms.DuplicateEntity, "custom field %q exists", name)
	}
	return f, err
}

// EnsureCustomer creates a customer if it does not exist.
func (s *Store) EnsureCustomer(ctx context.Context, id int64, name string) error {
	_, err := s.w.ExecContext(ctx, `INSERT INTO customers (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, id, name)
	return err
}

// SetCustomerLocked locks or unlocks a customer account; its users'
// sessions refuse at once.
func (s *Store) SetCustomerLocked(ctx context.Context, id int64, locked bool) error {
	return s.authTx(ctx, wnms.AuthEvent{All: true}, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE customers SET locked = $1 WHERE id = $2`, locked, id)
		return err
	})
}

// CountUsers counts all users of all customers.
func (s *Store) CountUsers(ctx context.Context) (int, error) {
	var n int
	err := s.r.QueryRowContext(ctx, `SELECT count(*) FROM users`).Scan(&n)
	return n, err
}

// txReads reads inside a write transaction, so that an edit's checks see
// what the transaction sees and never wait for a second connection.
type txReads struct {
	d Dialect
	q querier
}

func (r txReads) Location(ctx context.Context, id int64) (*wnms.Location, error) {
	return location(ctx, r.q, id)
}

func (r txReads) LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error) {
	return locationPaths(ctx, r.d, r.q, ids)
}

func (r txReads) CustomFields(ctx context.Context, customerID int64) ([]wnms.CustomField, error) {
	return customFields(ctx, r.q, customerID)
}

// auditUser is a user as its audit record compares it: its fields, and
// "password" when the change sets one (only ever shown masked).
func auditUser(u *wnms.User, password string) any {
	b, err := json.Marshal(u) // wnms.User encodes itself
	if err != nil || password == "" {
		return json.RawMessage(b)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return json.RawMessage(b)
	}
	m["password"] = json.RawMessage(`"` + password + `"`)
	return m
}

// setOrNot is "set" for a password hash, "" for none: what a user's audit
// record compares of its password.
func setOrNot(hash string) string {
	if hash == "" {
		return ""
	}
	return "set"
}
