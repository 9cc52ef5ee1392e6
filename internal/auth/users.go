package auth

import (
	"context"
	"fmt"

	"github.com/wnms/wnms/internal/wnms"
)

// UserMaker is what EnsureAPIUser needs of the store.
type UserMaker interface {
	UserByLogin(ctx context.Context, loginID string) (*wnms.User, string, error)
	User(ctx context.Context, customerID, userID int64) (*wnms.User, error)
	CreateUser(ctx context.Context, u *wnms.User, passwordHash string) error
	EnsureCustomer(ctx context.Context, id int64, name string) error
}

// EnsureAPIUser finds the API user login, or creates it with the role and
// customer, allowed at the root location. An existing user of another type
// or role is an error.
func EnsureAPIUser(ctx context.Context, st UserMaker, login, roleName string, customer int64) (*wnms.User, error) {
	u, _, err := st.UserByLogin(ctx, login)
	if err == nil {
		if u.UserType != wnms.UserTypeAPI {
			return nil, fmt.Errorf("user %q exists with userType %s; keys belong to API users", login, u.UserType)
		}
		if roleName != "" {
			if r, ok := wnms.ParseRole(roleName); !ok || r != u.Role {
				return nil, fmt.Errorf("user %q exists with role %s", login, u.Role)
			}
		}
		return u, nil
	}
	if wnms.ErrorCode(err) != wnms.ResourceNotFound {
		return nil, err
	}
	role, ok := wnms.ParseRole(roleName)
	if !ok {
		return nil, fmt.Errorf("role must be VIEWER, OPERATOR, POWERUSER, ADMINISTRATOR or SUPERUSER")
	}
	if customer < 1 {
		return nil, fmt.Errorf("customer must be a positive id")
	}
	if err := st.EnsureCustomer(ctx, customer, fmt.Sprintf("customer %d", customer)); err != nil {
		return nil, err
	}
	nu := wnms.NewUser(customer)
	u = &nu
	u.LoginID, u.Role, u.UserType = login, role, wnms.UserTypeAPI
	u.AllowedLocations = []wnms.LocationID{wnms.LocalID(wnms.RootLocation)}
	if err := u.Validate(nil); err != nil {
		return nil, fmt.Errorf("user %q: %w", login, err)
	}
	if err := st.CreateUser(ctx, u, ""); err != nil {
		return nil, err
	}
	return st.User(ctx, 0, u.UserID)
}
