package api_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// Two administrators edit one user at the same moment, each a different
// field. A modify reads, checks and writes in one transaction, so both
// edits land whatever their order; a read outside the transaction would
// let the later write put back the field the earlier one changed.
func TestUserConcurrentEditsBothApply(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		_, other := e.NewUser(t, apitest.UserSpec{Role: wnms.SuperUser})
		var u wnms.User
		e.Admin.Expect(200, "PUT", "/V5/users", newUserBody("grace", "VIEWER", nil)).Decode(t, &u)
		const rounds = 25
		for i := 0; i < rounds; i++ {
			edits := []struct {
				c    *apitest.Client
				body map[string]any
			}{
				{e.Admin, map[string]any{"user": map[string]any{"userId": u.UserID, "firstName": fmt.Sprintf("first-%d", i)}}},
				{other, map[string]any{"user": map[string]any{"userId": u.UserID, "lastName": fmt.Sprintf("last-%d", i)}}},
				// A password set with a field: the hash is made before the
				// transaction, the field and the password land together.
				{e.Admin, map[string]any{"user": map[string]any{"loginId": "grace", "email": fmt.Sprintf("g%d@example.net", i)},
					"password": fmt.Sprintf("new-pass-%d", i)}},
			}
			var wg sync.WaitGroup
			status := make([]int, len(edits))
			bodies := make([]string, len(edits))
			for j, ed := range edits {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := ed.c.Do("POST", "/V5/users", ed.body)
					status[j], bodies[j] = r.Status, string(r.Body)
				}()
			}
			wg.Wait()
			for j := range edits {
				if status[j] != 200 {
					t.Fatalf("round %d edit %d: %d %s", i, j, status[j], bodies[j])
				}
			}
			got := listUsers(t, e.Admin)["grace"]
			if got.FirstName != fmt.Sprintf("first-%d", i) || got.LastName != fmt.Sprintf("last-%d", i) ||
				got.Email != fmt.Sprintf("g%d@example.net", i) {
				t.Fatalf("round %d: an edit was lost: first %q last %q email %q", i, got.FirstName, got.LastName, got.Email)
			}
		}
		// The last password set is the one in force.
		c := e.NewClient()
		c.Expect(200, "POST", "/login/c/600", passwordBody("grace", fmt.Sprintf("new-pass-%d", rounds-1)))
	})
}
