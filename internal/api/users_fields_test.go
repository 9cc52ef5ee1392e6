package api_test

import (
	"testing"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

// The user calls honour fields too: users/current once ignored it.
func TestUserFields(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	for _, c := range []struct {
		path     string
		want     int
		code     string
		wantKeys []string
	}{
		{"/V5/users/current?fields=nope", 400, wnms.SelectiveFetch, nil},
		{"/V5/users?fields=loginId,nope", 400, wnms.SelectiveFetch, nil},
		{"/V5/users/current?fields=loginId,role", 200, "", []string{"loginId", "role"}},
		{"/V5/users/current?fields=[userId]", 200, "", []string{"userId"}},
		{"/V5/users?fields=loginId&fields=userType", 200, "", []string{"loginId", "userType"}},
	} {
		r := e.Admin.Do("GET", c.path, nil)
		if r.Status != c.want || r.ErrorCode() != c.code {
			t.Errorf("GET %s: %d %s", c.path, r.Status, r.Body)
			continue
		}
		if c.wantKeys == nil {
			continue
		}
		var objs []map[string]any
		if r.Body[0] == '[' {
			r.Decode(t, &objs)
		} else {
			var o map[string]any
			r.Decode(t, &o)
			objs = append(objs, o)
		}
		for _, o := range objs {
			if len(o) != len(c.wantKeys) {
				t.Errorf("GET %s: %v, want only %v", c.path, o, c.wantKeys)
			}
			for _, k := range c.wantKeys {
				if _, ok := o[k]; !ok {
					t.Errorf("GET %s: %v lacks %s", c.path, o, k)
				}
			}
		}
	}
}
