// Package accounts manages the user accounts of a customer: list, create,
// modify and delete, each as one call that validates the user (the rules
// of wnms.User), asks access control what the caller may do, hashes a
// password outside any transaction, and stores the result in one
// transaction. The listeners only decode and encode.
package accounts

import (
	"context"
	"encoding/json"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/wnms"
)

// Store is what account management reads and writes.
type Store interface {
	access.Locations
	Users(ctx context.Context, customerID int64) ([]wnms.User, error)
	User(ctx context.Context, customerID, userID int64) (*wnms.User, error)
	UserByLogin(ctx context.Context, loginID string) (*wnms.User, string, error)
	CreateUser(ctx context.Context, u *wnms.User, passwordHash string) error
	ModifyUser(ctx context.Context, customerID, userID int64, passwordHash string,
		edit func(old *wnms.User, in wnms.UserReads) (*wnms.User, error)) (*wnms.User, error)
	DeleteUser(ctx context.Context, customerID, userID int64) error
	CustomFields(ctx context.Context, customerID int64) ([]wnms.CustomField, error)
}

// Hasher turns a password into the hash that is stored.
type Hasher interface {
	Hash(ctx context.Context, password string) (string, error)
}

// Service manages accounts.
type Service struct {
	Store  Store
	Hasher Hasher
}

// List is the users of the caller's customer that lie in the caller's
// scope (every allowed location one the caller sees), and the caller.
func (s *Service) List(ctx context.Context, c *wnms.Caller) ([]wnms.User, error) {
	users, err := s.Store.Users(ctx, c.CustomerID())
	if err != nil {
		return nil, err
	}
	in, err := access.Scope(ctx, s.Store, c, users)
	if err != nil {
		return nil, err
	}
	out := make([]wnms.User, 0, len(users))
	for i := range users {
		if in[i] || users[i].UserID == c.User.UserID {
			out = append(out, users[i])
		}
	}
	return out, nil
}

// Create makes a user of the caller's customer from the "user" object of
// a create and its password. A user sent without locations gets the
// caller's.
func (s *Service) Create(ctx context.Context, c *wnms.Caller, raw json.RawMessage, password *string) (*wnms.User, error) {
	u, err := wnms.ParseNewUser(raw, c.CustomerID())
	if err != nil {
		return nil, err
	}
	if len(u.AllowedLocations) == 0 {
		u.AllowedLocations = append([]wnms.LocationID(nil), c.User.AllowedLocations...)
	}
	if err := check(ctx, s.Store, c, u); err != nil {
		return nil, err
	}
	hash, err := s.passwordHash(ctx, u.UserType, password, true)
	if err != nil {
		return nil, err
	}
	if err := s.Store.CreateUser(ctx, u, hash); err != nil {
		return nil, wnms.AtField(err, "customerId")
	}
	return s.Store.User(ctx, c.CustomerID(), u.UserID)
}

// Modify changes the user a modify's "user" object names (userId, or
// loginId) by the fields it sends, and sets its password when one is sent
// (which ends the user's sessions). The read, the checks and the write are
// one transaction: two concurrent modifies of one user both apply.
func (s *Service) Modify(ctx context.Context, c *wnms.Caller, raw json.RawMessage, password *string) (*wnms.User, error) {
	edit, err := wnms.ParseUserEdit(raw)
	if err != nil {
		return nil, err
	}
	target, err := s.find(ctx, c, edit.UserID, edit.LoginID)
	if err != nil {
		return nil, err
	}
	// Refuse early, before the slow hash; the transaction checks again
	// against the row it locks, which a concurrent change may have moved.
	if err := access.Manage(ctx, s.Store, c, target); err != nil {
		return nil, err
	}
	// The user type never changes, so the password can be hashed (slowly,
	// on purpose) before the transaction rather than inside it. The
	// caller's own scope was resolved by the check above, so the checks
	// inside read only through the transaction.
	hash, err := s.passwordHash(ctx, target.UserType, password, false)
	if err != nil {
		return nil, err
	}
	return s.Store.ModifyUser(ctx, c.CustomerID(), target.UserID, hash, func(old *wnms.User, in wnms.UserReads) (*wnms.User, error) {
		if err := access.Manage(ctx, in, c, old); err != nil {
			return nil, err
		}
		if changes, lock := edit.ChangesLock(old); changes {
			if err := access.SetLock(c, old, lock); err != nil {
				return nil, err
			}
		}
		u, err := edit.Apply(old)
		if err != nil {
			return nil, err
		}
		return u, check(ctx, in, c, u)
	})
}

// Delete removes a user of the caller's customer that the caller may
// manage, never the caller itself.
func (s *Service) Delete(ctx context.Context, c *wnms.Caller, userID int64) error {
	target, err := s.Store.User(ctx, c.CustomerID(), userID)
	if err != nil {
		return err
	}
	if err := access.Delete(ctx, s.Store, c, target); err != nil {
		return err
	}
	return s.Store.DeleteUser(ctx, c.CustomerID(), userID)
}

// check validates u and that the caller may grant its role and locations,
// reading through in.
func check(ctx context.Context, in wnms.UserReads, c *wnms.Caller, u *wnms.User) error {
	var fields []wnms.CustomField
	if len(u.UserDefinedFields) > 0 {
		var err error
		if fields, err = in.CustomFields(ctx, u.CustomerID); err != nil {
			return err
		}
	}
	if err := u.Validate(fields); err != nil {
		return err
	}
	return access.Grant(ctx, in, c, u)
}

// find finds a user of the caller's customer by id or login id.
func (s *Service) find(ctx context.Context, c *wnms.Caller, id *int64, login *string) (*wnms.User, error) {
	switch {
	case id != nil && *id != 0:
		return s.Store.User(ctx, c.CustomerID(), *id)
	case login != nil && *login != "":
		u, _, err := s.Store.UserByLogin(ctx, *login)
		if err != nil {
			return nil, err
		}
		if u.CustomerID != c.CustomerID() {
			return nil, wnms.NotFound("no user %q", *login)
		}
		return u, nil
	}
	return nil, wnms.Invalid("userId", "required: userId or loginId of the user to modify")
}

// passwordHash checks and hashes the password sent for a user of the given
// type. Only LOCAL users have one: required says a LOCAL user must send one
// (on create). Users of other types sign in elsewhere (API users by key),
// so whatever password their body carries is ignored and never stored:
// clients always send the {user, password} shape. An absent or empty
// password is "".
func (s *Service) passwordHash(ctx context.Context, userType string, pw *string, required bool) (string, error) {
	if userType != wnms.UserTypeLocal {
		return "", nil
	}
	if pw == nil || *pw == "" {
		if required {
			return "", wnms.Invalid("password", "required for a LOCAL user")
		}
		return "", nil
	}
	if err := auth.CheckPasswordRules(*pw); err != nil {
		return "", wnms.Invalid("password", "%s", err.Error())
	}
	return s.Hasher.Hash(ctx, *pw)
}
