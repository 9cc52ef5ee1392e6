package accounts_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/wnms/wnms/internal/accounts"
	"github.com/wnms/wnms/internal/store/storetest"
	"github.com/wnms/wnms/internal/wnms"
)

// plainHasher stands in for argon2id: these tests are about what is
// stored when, not about hashing.
type plainHasher struct{}

func (plainHasher) Hash(_ context.Context, pw string) (string, error) { return "plain:" + pw, nil }

func TestModifyIsAllOrNothing(t *testing.T) {
	storetest.ForEachBackend(t, func(t *testing.T, b storetest.Backend) {
		ctx := context.Background()
		st := storetest.OpenStore(t, b)
		if err := st.EnsureCustomer(ctx, 1, "customer 1"); err != nil {
			t.Fatal(err)
		}
		svc := &accounts.Service{Store: st, Hasher: plainHasher{}}
		admin := wnms.NewUser(1)
		admin.LoginID, admin.Role, admin.UserType = "root", wnms.SuperUser, wnms.UserTypeAPI
		admin.AllowedLocations = []wnms.LocationID{wnms.LocalID(wnms.RootLocation)}
		if err := st.CreateUser(ctx, &admin, ""); err != nil {
			t.Fatal(err)
		}
		c := wnms.NewCaller(&admin, &wnms.Session{}, st.LocationPaths)
		pw := "first-pass-1"
		u, err := svc.Create(ctx, c, json.RawMessage(`{"loginId":"ada","role":"VIEWER","firstName":"Ada"}`), &pw)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			raw  string
			pw   string
			want string
		}{
			{"a bad field after a good one", `{"userId":%d,"firstName":"Changed","email":"not an address"}`, "", wnms.ValidationFailed},
			{"a good field with a bad password", `{"userId":%d,"firstName":"Changed"}`, "short", wnms.ValidationFailed},
			{"an unknown role", `{"userId":%d,"firstName":"Changed","role":"ROOT"}`, "", wnms.ValidationFailed},
			{"a location that does not exist", `{"userId":%d,"firstName":"Changed","allowedLocations":[{"id":404}]}`, "", wnms.ValidationFailed},
			{"a change of type", `{"userId":%d,"firstName":"Changed","userType":"API"}`, "", wnms.ValidationFailed},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var p *string
				if tc.pw != "" {
					p = &tc.pw
				}
				raw := json.RawMessage([]byte(fmt.Sprintf(tc.raw, u.UserID)))
				if _, err := svc.Modify(ctx, c, raw, p); wnms.ErrorCode(err) != tc.want {
					t.Fatalf("Modify: %v, want %s", err, tc.want)
				}
				got, err := st.User(ctx, 1, u.UserID)
				if err != nil {
					t.Fatal(err)
				}
				hash, err := st.PasswordHash(ctx, u.UserID)
				if err != nil {
					t.Fatal(err)
				}
				if got.FirstName != "Ada" || hash != "plain:first-pass-1" {
					t.Errorf("a refused modify changed the user: firstName %q, hash %q", got.FirstName, hash)
				}
			})
		}
		// A good one changes the field and the password together.
		pw2 := "second-pass-2"
		got, err := svc.Modify(ctx, c, json.RawMessage([]byte(fmt.Sprintf(`{"userId":%d,"firstName":"Grace"}`, u.UserID))), &pw2)
		if err != nil {
			t.Fatal(err)
		}
		hash, _ := st.PasswordHash(ctx, u.UserID)
		if got.FirstName != "Grace" || hash != "plain:second-pass-2" {
			t.Errorf("modify stored firstName %q, hash %q", got.FirstName, hash)
		}
	})
}
