package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/apitest"
	"github.com/wnms/wnms/internal/wnms"
)

func keyBody(id, value string) map[string]string {
	return map[string]string{"type": "apikeycredentials", "keyId": id, "keyValue": value}
}

func TestLoginPathsAndCookie(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		for _, path := range []string{
			"/login/key/client/600",
			"/V4/login/key/client/600",
			"/v5/login/key/client/600",
			"/login/client/600",
			"/V4/login/client/600",
		} {
			t.Run(path, func(t *testing.T) {
				c := e.NewClient()
				r := c.Expect(http.StatusOK, "POST", path+"?getClusterChildrenData=false", map[string]string{
					"type": "ApiKeyCredentials", "keyId": e.AdminKeyID, "keyValue": e.AdminKeyValue, "exposedCustomerId": "x"})
				ck := r.Header.Get("Set-Cookie")
				for _, want := range []string{"JSESSIONID=", "Path=/", "HttpOnly", "SameSite=Strict"} {
					if !strings.Contains(ck, want) {
						t.Errorf("Set-Cookie %q lacks %q", ck, want)
					}
				}
				if strings.Contains(ck, "Secure") {
					t.Errorf("Set-Cookie %q is Secure without TLS", ck)
				}
				var body map[string]any
				r.Decode(t, &body)
				for k, want := range map[string]any{"loginName": "admin", "loginId": "admin", "userRoleId": float64(5),
					"keyId": e.AdminKeyID, "role": "SUPERUSER"} {
					if body[k] != want {
						t.Errorf("login body %s = %v, want %v", k, body[k], want)
					}
				}
				if _, ok := body["allowedLocations"]; !ok {
					t.Error("login body lacks allowedLocations")
				}
				if strings.Contains(string(r.Body), e.AdminKeyValue) {
					t.Error("login body echoes the key value")
				}
				c.Expect(http.StatusOK, "GET", "/V5/users/current", nil)
			})
		}
	})
}

func TestLoginBadInput(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		good := keyBody(e.AdminKeyID, e.AdminKeyValue)
		cases := []struct {
			name   string
			path   string
			body   any
			status int
			code   string
		}{
			{"client id too long", "/login/key/abcdefghijklmnopqrstu/600", good, 400, wnms.InvalidParameter},
			{"timeout not a number", "/login/key/c/ten", good, 400, wnms.InvalidParameter},
			{"timeout too short", "/login/key/c/59", good, 400, wnms.InvalidParameter},
			{"timeout too long", "/login/key/c/86401", good, 400, wnms.InvalidParameter},
			{"bad cluster flag", "/login/key/c/600?getClusterChildrenData=maybe", good, 400, wnms.InvalidParameter},
			{"not JSON", "/login/key/c/600", "{", 400, wnms.InvalidRequestBody},
			{"wrong field type", "/login/key/c/600", `{"type":"apikeycredentials","keyId":5,"keyValue":"x"}`, 400, wnms.InvalidRequestBody},
			{"no type", "/login/key/c/600", map[string]string{"keyId": "a", "keyValue": "b"}, 400, wnms.ValidationFailed},
			{"no key id", "/login/key/c/600", map[string]string{"type": "apikeycredentials", "keyValue": "b"}, 400, wnms.ValidationFailed},
			{"password on key path", "/login/key/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "a", "password": "b"}, 400, wnms.UnsupportedAuthType},
			{"unknown type", "/login/c/600", map[string]string{"type": "kerberos"}, 400, wnms.UnsupportedAuthType},
			{"wrong key value", "/login/key/c/600", keyBody(e.AdminKeyID, "nope"), 401, wnms.InvalidCredentials},
			{"unknown key id", "/login/key/c/600", keyBody("nokey", "nope"), 401, wnms.InvalidCredentials},
			{"API user with password", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "admin", "password": "whatever1"}, 400, wnms.UnsupportedAuthType},
			{"unknown user", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "ghost", "password": "whatever1"}, 401, wnms.InvalidCredentials},
			{"form body", "/login/key/c/600", apitest.Raw{ContentType: "application/x-www-form-urlencoded", Body: []byte("a=b")}, 415, wnms.UnsupportedMediaType},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c := e.NewClient()
				r := c.Do("POST", tc.path, tc.body)
				if r.Status != tc.status || r.ErrorCode() != tc.code {
					t.Fatalf("status %d %s, want %d %s; %s", r.Status, r.ErrorCode(), tc.status, tc.code, r.Body)
				}
				if r.Header.Get("Set-Cookie") != "" {
					t.Error("a failed login set a cookie")
				}
			})
		}
	})
}

func TestSessionLifecycle(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clk := apitest.NewClock(time.Now())
		e.UseClock(clk)
		c := e.NewClient()
		c.Expect(200, "POST", "/login/key/c/60", keyBody(e.AdminKeyID, e.AdminKeyValue))
		c.Expect(200, "GET", "/V5/users/current", nil)

		// Ordinary calls do not extend the session.
		clk.Advance(59 * time.Second)
		c.Expect(200, "GET", "/V5/users/current", nil)
		// Keep-alive by GET and by POST moves the expiry to now + timeout.
		c.Expect(200, "GET", "/V5/login/keepsessionalive", nil)
		clk.Advance(59 * time.Second)
		c.Expect(200, "POST", "/V5/login/keepsessionalive", nil)
		clk.Advance(59 * time.Second)
		c.Expect(200, "GET", "/V5/users/current", nil)
		clk.Advance(2 * time.Second)
		r := c.Expect(401, "GET", "/V5/users/current", nil)
		if r.ErrorCode() != wnms.SessionExpired {
			t.Errorf("expired session: %s, want SESSION_EXPIRED", r.ErrorCode())
		}
		c.Expect(401, "POST", "/V5/login/keepsessionalive", nil)

		// Logout ends the session at once and clears the cookie.
		c2 := e.NewClient()
		c2.Expect(200, "POST", "/login/key/c/600", keyBody(e.AdminKeyID, e.AdminKeyValue))
		token := c2.Session()
		r = c2.Expect(200, "POST", "/logout", nil)
		if len(r.Body) != 0 {
			t.Errorf("logout body %q, want empty", r.Body)
		}
		if !strings.Contains(r.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Errorf("logout does not clear the cookie: %q", r.Header.Get("Set-Cookie"))
		}
		c3 := e.NewClient()
		c3.SetSession(token)
		if r := c3.Expect(401, "GET", "/V5/users/current", nil); r.ErrorCode() != wnms.SessionExpired {
			t.Errorf("after logout: %s", r.ErrorCode())
		}
		if r := e.NewClient().Expect(401, "GET", "/V5/users/current", nil); r.ErrorCode() != wnms.SessionRequired {
			t.Errorf("no cookie: %s, want SESSION_REQUIRED", r.ErrorCode())
		}
		c3.SetSession("forged")
		c3.Expect(401, "GET", "/V5/users/current", nil)
	})
}

// Sessions live in the store: a second replica over the same database
// serves a session opened on the first. Each replica caches sessions, and a
// change made on one reaches the other's cache: at once between processes
// on one SQLite file, within 1 s over PostgreSQL (LISTEN/NOTIFY).
func TestSessionsAcrossReplicas(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e1 := apitest.New(t, b)
		e2 := apitest.NewAt(t, b, e1.Config)
		bound := replicaBound(b)
		// on2 is the session c opened on replica 1, used on replica 2 (and
		// cached there by a first call).
		on2 := func(c *apitest.Client) *apitest.Client {
			c2 := e2.NewClient()
			c2.SetSession(c.Session())
			c2.Expect(200, "GET", "/V5/users/current", nil)
			return c2
		}

		t.Run("keep-alive and logout", func(t *testing.T) {
			c1 := e1.LoginKey(t, e1.AdminKeyID, e1.AdminKeyValue)
			c2 := on2(c1)
			c2.Expect(200, "POST", "/V5/login/keepsessionalive", nil)
			c2.Expect(200, "GET", "/V5/users/current", nil)
			c1.Expect(200, "POST", "/logout", nil)
			expectWithin(t, bound, "the logged-out session on the other replica", func() int {
				return c2.Do("GET", "/V5/users/current", nil).Status
			}, 401)
		})
		t.Run("key revoked", func(t *testing.T) {
			u, c1 := e1.NewUser(t, apitest.UserSpec{Role: wnms.Operator})
			c2 := on2(c1)
			var keys []wnms.APIKey
			e1.Admin.Expect(200, "GET", "/V5/apikeys", nil).Decode(t, &keys)
			for _, k := range keys {
				if k.UserID == u.UserID {
					e1.Admin.Expect(204, "DELETE", "/V5/apikeys/"+k.KeyID, nil)
				}
			}
			expectWithin(t, bound, "a session of a revoked key on the other replica", func() int {
				return c2.Do("GET", "/V5/users/current", nil).Status
			}, 401)
		})
		t.Run("user locked", func(t *testing.T) {
			u, c1 := e1.NewUser(t, apitest.UserSpec{Role: wnms.Operator})
			c2 := on2(c1)
			e1.Admin.Expect(200, "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": u.UserID, "userLockedState": "USER_LOCKED"}})
			c1.Expect(401, "GET", "/V5/users/current", nil) // at once where the lock was made
			expectWithin(t, bound, "a locked user's session on the other replica", func() int {
				return c2.Do("GET", "/V5/users/current", nil).Status
			}, 401)
		})
		t.Run("user changed", func(t *testing.T) {
			u, c1 := e1.NewUser(t, apitest.UserSpec{Role: wnms.Administrator})
			c2 := on2(c1)
			c2.Expect(200, "GET", "/V7/system/info", nil)
			e1.Admin.Expect(200, "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": u.UserID, "role": "OPERATOR"}})
			c1.Expect(403, "GET", "/V7/system/info", nil) // at once where the change was made
			expectWithin(t, bound, "a demoted user's session on the other replica", func() int {
				return c2.Do("GET", "/V7/system/info", nil).Status
			}, 403)
		})
	})
}

// replicaBound is how long a change may take to reach another replica's
// session cache: none on SQLite, 1 s on PostgreSQL.
func replicaBound(b apitest.Backend) time.Duration {
	if b == apitest.Postgres {
		return time.Second
	}
	return 0
}

// expectWithin polls status() until it answers want, failing the test if it
// has not by bound (a bound of 0 asks for the first answer to be right).
func expectWithin(t *testing.T, bound time.Duration, what string, status func() int, want int) {
	t.Helper()
	start := time.Now()
	for {
		got := status()
		if got == want {
			return
		}
		if time.Since(start) > bound {
			t.Fatalf("%s: status %d after %v, want %d within %v", what, got, time.Since(start).Round(time.Millisecond), want, bound)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestLockoutAfterFailedLogins(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clk := apitest.NewClock(time.Now())
		e.UseClock(clk)
		u, _ := e.NewUser(t, apitest.UserSpec{Login: "alice", Role: wnms.Operator, Type: wnms.UserTypeLocal, Password: "correct horse"})
		login := func(pw string) *apitest.Response {
			return e.NewClient().Do("POST", "/login/c/600", map[string]string{
				"type": "usernamepasswordcredentials", "username": "alice", "password": pw})
		}
		if r := login("correct horse"); r.Status != 200 {
			t.Fatalf("good login: %d %s", r.Status, r.Body)
		}
		for i := 0; i < 5; i++ {
			if r := login("wrong"); r.Status != 401 || r.ErrorCode() != wnms.InvalidCredentials {
				t.Fatalf("bad login %d: %d %s", i, r.Status, r.Body)
			}
		}
		// Locked: even the right password fails, with the same answer.
		if r := login("correct horse"); r.Status != 401 || r.ErrorCode() != wnms.InvalidCredentials {
			t.Fatalf("locked login: %d %s", r.Status, r.Body)
		}
		var got wnms.User
		e.Admin.Expect(200, "GET", "/V5/users", nil)
		users := []wnms.User{}
		e.Admin.Expect(200, "GET", "/V5/users", nil).Decode(t, &users)
		for _, x := range users {
			if x.UserID == u.UserID {
				got = x
			}
		}
		if got.UserLockedState != wnms.UserLocked || got.TemporaryLockDateTime != clk.Now().Add(15*time.Minute).UnixMilli() {
			t.Fatalf("locked user: state %s until %d", got.UserLockedState, got.TemporaryLockDateTime)
		}
		// The lock clears by itself after 15 minutes.
		clk.Advance(15*time.Minute + time.Second)
		if r := login("correct horse"); r.Status != 200 {
			t.Fatalf("login after lock expiry: %d %s", r.Status, r.Body)
		}
		// An administrator can unlock at once.
		for i := 0; i < 5; i++ {
			login("wrong")
		}
		e.Admin.Expect(200, "POST", "/V5/users", map[string]any{"user": map[string]any{"userId": u.UserID, "userLockedState": "NOT_LOCKED"}})
		if r := login("correct horse"); r.Status != 200 {
			t.Fatalf("login after unlock: %d %s", r.Status, r.Body)
		}
	})
}

func TestLoginThrottlePerAddress(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clk := apitest.NewClock(time.Now())
		e.UseClock(clk)
		for i := 0; i < 20; i++ {
			if r := e.NewClient().Do("POST", "/login/key/c/600", keyBody("nokey", "x")); r.Status != 401 {
				t.Fatalf("failure %d: %d", i, r.Status)
			}
		}
		r := e.NewClient().Do("POST", "/login/key/c/600", keyBody(e.AdminKeyID, e.AdminKeyValue))
		if r.Status != 429 || r.ErrorCode() != wnms.RateLimited || r.Header.Get("Retry-After") == "" {
			t.Fatalf("21st attempt: %d %s Retry-After=%q", r.Status, r.ErrorCode(), r.Header.Get("Retry-After"))
		}
		clk.Advance(61 * time.Second)
		e.NewClient().Expect(200, "POST", "/login/key/c/600", keyBody(e.AdminKeyID, e.AdminKeyValue))
	})
}

// TestSuccessfulLoginsDoNotCount: a login that succeeds gives its attempt
// back in every bucket it took one from (the address, the key), so any
// number of them never throttles the next ones; failures still do. A key
// login also marks the key used.
func TestSuccessfulLoginsDoNotCount(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		clk := apitest.NewClock(time.Now())
		e.UseClock(clk)
		lastUsed := func() int64 {
			var keys []wnms.APIKey
			e.Admin.Expect(200, "GET", "/V5/apikeys", nil).Decode(t, &keys)
			for _, k := range keys {
				if k.KeyID == e.AdminKeyID {
					return k.LastUsedAt
				}
			}
			t.Fatalf("key %s not listed", e.AdminKeyID)
			return 0
		}
		before := lastUsed()
		clk.Advance(time.Second)
		for i := range 30 {
			if r := e.NewClient().Do("POST", "/login/key/c/600", keyBody(e.AdminKeyID, e.AdminKeyValue)); r.Status != 200 {
				t.Fatalf("successful login %d: %d %s", i+1, r.Status, r.ErrorCode())
			}
		}
		for i := range 20 {
			if r := e.NewClient().Do("POST", "/login/key/c/600", keyBody("nokey", "x")); r.Status != 401 {
				t.Fatalf("failure %d: %d", i+1, r.Status)
			}
		}
		if r := e.NewClient().Do("POST", "/login/key/c/600", keyBody(e.AdminKeyID, e.AdminKeyValue)); r.Status != 429 {
			t.Fatalf("after 20 failures: %d", r.Status)
		}
		if after := lastUsed(); after <= before {
			t.Errorf("key last used at %d after logging in with it, %d before", after, before)
		}
	})
}

func TestPasswordExpiryRestrictsSession(t *testing.T) {
	apitest.ForEachBackend(t, func(t *testing.T, b apitest.Backend) {
		e := apitest.New(t, b)
		past := time.Now().Add(-time.Hour).UnixMilli()
		r := e.Admin.Expect(200, "PUT", "/V5/users", map[string]any{
			"user": map[string]any{"loginId": "bob", "role": "OPERATOR", "userType": "LOCAL",
				"allowedLocations": []map[string]any{{"type": "locallocationid", "id": 0}},
				"passwdSettings": map[string]any{"passwordExpires": true, "passwordExpiryDateTime": past,
					"passwordExpiryDaysInterval": 90, "passwordExpiryWarningDays": 7}},
			"password": "initial-pass"})
		var bob wnms.User
		r.Decode(t, &bob)
		c := e.NewClient()
		r = c.Expect(200, "POST", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "bob", "password": "initial-pass"})
		var body map[string]any
		r.Decode(t, &body)
		if body["passwordChangeEnforced"] != true {
			t.Fatalf("expired password login: passwordChangeEnforced = %v", body["passwordChangeEnforced"])
		}
		c.Expect(200, "GET", "/V5/users/current", nil)
		if r := c.Expect(403, "GET", "/V5/users", nil); r.ErrorCode() != wnms.AccessDenied {
			t.Errorf("restricted session listed users: %s", r.ErrorCode())
		}
		// Wrong old password: false, and nothing changes.
		if r := c.Expect(200, "POST", "/V5/users/ownpassword", map[string]string{"oldPassword": "nope-nope", "newPassword": "second-pass"}); string(r.Body) != "false" {
			t.Fatalf("wrong old password: %s", r.Body)
		}
		if r := c.Expect(400, "POST", "/V5/users/ownpassword", map[string]string{"oldPassword": "initial-pass", "newPassword": "short"}); r.ErrorCode() != wnms.ValidationFailed {
			t.Fatalf("short new password: %s", r.ErrorCode())
		}
		if r := c.Expect(200, "POST", "/V5/users/ownpassword", map[string]string{"oldPassword": "initial-pass", "newPassword": "second-pass"}); string(r.Body) != "true" {
			t.Fatalf("change: %s", r.Body)
		}
		// The same session is no longer restricted, and the expiry moved on.
		c.Expect(200, "GET", "/V5/users", nil)
		var cur wnms.User
		c.Expect(200, "GET", "/V5/users/current", nil).Decode(t, &cur)
		if cur.PasswordChangeEnforced || cur.PasswdSettings.PasswordExpiryDateTime <= time.Now().UnixMilli() {
			t.Errorf("after change: enforced %v, expiry %d", cur.PasswordChangeEnforced, cur.PasswdSettings.PasswordExpiryDateTime)
		}
		e.NewClient().Expect(401, "POST", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "bob", "password": "initial-pass"})
		e.NewClient().Expect(200, "POST", "/login/c/600", map[string]string{"type": "usernamepasswordcredentials", "username": "bob", "password": "second-pass"})
	})
}

// When a replica's notification connection to PostgreSQL drops, it reads
// every session from the store until it is back, and starts its cache over
// when it is: a change made meanwhile, whose notification it missed, is
// never served stale.
func TestSessionCacheFallbackWhenListenerDrops(t *testing.T) {
	if len(apitest.Backends(t)) < 2 {
		t.Skip("PostgreSQL not configured")
	}
	e1 := apitest.New(t, apitest.Postgres)
	db := e1.DB()
	// The store's notification connections, as the database server lists
	// them: each replica's names itself wnms-auth-listener and, once
	// listening, shows its LISTEN on the channel of the store's schema as
	// its last statement (other tests' stores may share the database in
	// schemas of their own).
	listeners := func() map[int64]bool {
		t.Helper()
		rows, err := db.QueryContext(context.Background(), `SELECT pid FROM pg_stat_activity
			WHERE application_name = 'wnms-auth-listener' AND datname = current_database()
			AND state = 'idle' AND query LIKE 'LISTEN %' AND strpos(query, current_schema()) > 0`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		pids := map[int64]bool{}
		for rows.Next() {
			var pid int64
			if err := rows.Scan(&pid); err != nil {
				t.Fatal(err)
			}
			pids[pid] = true
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return pids
	}
	// listening waits for the one listener not in known, and returns it.
	listening := func(who string, known map[int64]bool) int64 {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			var fresh []int64
			for pid := range listeners() {
				if !known[pid] {
					fresh = append(fresh, pid)
				}
			}
			if len(fresh) == 1 {
				return fresh[0]
			}
		}
		t.Fatalf("%s is not listening for session changes: listeners %v, known before %v", who, listeners(), known)
		return 0
	}
	// Replica 1's listener is known before replica 2 starts: the one that
	// comes next is replica 2's.
	known := map[int64]bool{listening("replica 1", nil): true}
	e2 := apitest.NewAt(t, apitest.Postgres, e1.Config)
	on2 := func(c *apitest.Client) *apitest.Client {
		c2 := e2.NewClient()
		c2.SetSession(c.Session())
		c2.Expect(200, "GET", "/V5/users/current", nil)
		return c2
	}
	pid := listening("replica 2", known)
	c1 := e1.LoginKey(t, e1.AdminKeyID, e1.AdminKeyValue)
	c2 := on2(c1)
	if _, err := db.ExecContext(context.Background(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	c1.Expect(200, "POST", "/logout", nil)
	expectWithin(t, time.Second, "a session logged out while the listener was cut", func() int {
		return c2.Do("GET", "/V5/users/current", nil).Status
	}, 401)

	// Back with a connection of its own (the cut one may linger a while
	// in the server's list).
	known[pid] = true
	listening("replica 2, reconnected,", known)
	c1 = e1.LoginKey(t, e1.AdminKeyID, e1.AdminKeyValue)
	c2 = on2(c1)
	c1.Expect(200, "POST", "/logout", nil)
	expectWithin(t, time.Second, "a session logged out after the listener came back", func() int {
		return c2.Do("GET", "/V5/users/current", nil).Status
	}, 401)
}

// TestCrossOriginWritesRefused: a page of another site may not use the
// signed-in user's cookie to change state (the cookie is SameSite=Strict
// as well); the server's own pages and clients that are not browsers may.
func TestCrossOriginWritesRefused(t *testing.T) {
	e := apitest.New(t, apitest.SQLite)
	host := strings.TrimPrefix(e.HTTP.URL, "http://")
	for _, tc := range []struct {
		name   string
		header map[string]string
		method string
		want   int
	}{
		{"another origin", map[string]string{"Origin": "http://evil.example"}, "PUT", http.StatusForbidden},
		{"another site by fetch metadata", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, "PUT", http.StatusForbidden},
		{"a sibling site", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://other." + host}, "PUT", http.StatusForbidden},
		{"another origin reading", map[string]string{"Origin": "http://evil.example"}, "GET", http.StatusOK},
		{"the server's own page", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": e.HTTP.URL}, "PUT", http.StatusOK},
		{"the server's own origin, no fetch metadata", map[string]string{"Origin": e.HTTP.URL}, "PUT", http.StatusOK},
		{"no browser", nil, "PUT", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e.LoginKey(t, e.AdminKeyID, e.AdminKeyValue)
			for k, v := range tc.header {
				c.Header.Set(k, v)
			}
			path := "/V5/locations/tree"
			var b any
			if tc.method == "PUT" {
				path, b = "/V5/locations", map[string]any{"parentLocation": map[string]any{"type": "locallocationid", "id": 0},
					"location": map[string]any{"type": "folderlocation", "name": "site " + tc.name}}
			}
			r := c.Expect(tc.want, tc.method, path, b)
			if tc.want == http.StatusForbidden && r.ErrorCode() != wnms.AccessDenied {
				t.Errorf("error %s, want ACCESS_DENIED", r.ErrorCode())
			}
		})
	}
	// Nothing the refused calls sent was made.
	r := e.Admin.Expect(http.StatusOK, "GET", "/V5/locations/tree", nil)
	for _, name := range []string{"site another origin", "site another site by fetch metadata", "site a sibling site"} {
		if strings.Contains(string(r.Body), name) {
			t.Errorf("a refused call made %q", name)
		}
	}
}
