package auth

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Store is what authentication reads and writes: sessions, keys and
// attempts, and of users what a login needs.
type Store interface {
	wnms.SessionStore
	User(ctx context.Context, customerID, userID int64) (*wnms.User, error)
	UserByLogin(ctx context.Context, loginID string) (*wnms.User, string, error)
	PasswordHash(ctx context.Context, userID int64) (string, error)
	ReserveGuess(ctx context.Context, userID int64, max int) (n int, ok bool, err error)
	LockUser(ctx context.Context, userID int64, until int64) error
	LoginSucceeded(ctx context.Context, userID int64) error
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
}

// Service opens, checks and ends sessions, and keeps the lockout and
// throttling rules of api.md §6 and §14.
type Service struct {
	Store  Store
	Secret []byte // keys API-key hashes
	Argon  Argon2Params
	Now    func() time.Time

	MaxFailures int           // consecutive failed guesses that lock a user (5)
	LockFor     time.Duration // how long a lock lasts (15 min)
	// MaxAttempts is how many failed logins a source address, or an API key
	// id, may have in Window before further attempts are refused with 429
	// (20 a minute).
	MaxAttempts int
	Window      time.Duration
	// HashWait is how long a login waits for a free password-hashing slot
	// before it is refused with 429 (2 s). At most HashSlots hashes run at
	// once (argon2id takes its memory cost, 19 MiB by default, for each).
	HashWait time.Duration

	// OnUserLocked is called when failed logins lock a user.
	OnUserLocked func(u *wnms.User)
	// OnLoginFailure is called for every failed login.
	OnLoginFailure func()

	hashSlots chan struct{}
	dummyOnce sync.Once
	dummy     string
	cache     sessionCache
}

// HashSlots is the default number of password hashes that may run at once.
func HashSlots() int { return max(2, runtime.NumCPU()) }

// NewService returns a Service with the documented defaults. It subscribes
// to the store's auth events, so its session cache drops what any replica
// ends or alters.
func NewService(st Store, secret []byte) *Service {
	a := &Service{Store: st, Secret: secret, Argon: DefaultArgon2, Now: time.Now,
		MaxFailures: 5, LockFor: 15 * time.Minute, MaxAttempts: 20, Window: time.Minute,
		HashWait: 2 * time.Second, hashSlots: make(chan struct{}, HashSlots())}
	st.SubscribeAuth(a.cache.apply)
	return a
}

// LimitHashing sets how many password hashes may run at once and how long
// a login waits for a free one. Call it before the service serves.
func (a *Service) LimitHashing(slots int, wait time.Duration) {
	a.hashSlots, a.HashWait = make(chan struct{}, slots), wait
}

// LoginRequest is what every login carries besides credentials.
type LoginRequest struct {
	ClientIdentifier string
	Timeout          int // seconds
	ClusterChildren  bool
	Addr             string // source address, for throttling
}

// Login is an opened session: the token for the cookie, the session and
// its user.
type Login struct {
	Token   string
	Session *wnms.Session
	User    *wnms.User
}

// errBadCredentials never says which part was wrong.
func errBadCredentials() error {
	return wnms.Errorf(wnms.InvalidCredentials, "invalid credentials")
}

func rateLimited(wait time.Duration, format string, args ...any) error {
	e := wnms.Errorf(wnms.RateLimited, format, args...)
	e.RetryAfter = int((wait + time.Second - 1) / time.Second)
	if e.RetryAfter < 1 {
		e.RetryAfter = 1
	}
	return e
}

// attempt reserves a login attempt against each bucket before any
// credential is judged (Store.ReserveAttempt): the answer is 429 once a
// bucket holds MaxAttempts failures in the window, however many attempts
// arrive at once. The reservation is given back after a success: with
// the session it opens (open), or by its release when none is opened.
func (a *Service) attempt(ctx context.Context, buckets ...string) (*reservation, error) {
	now := a.Now()
	ids, retryAt, ok, err := a.Store.ReserveAttempt(ctx, buckets, now.Add(-a.Window).UnixMilli(), a.MaxAttempts)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, rateLimited(time.UnixMilli(retryAt).Add(a.Window).Sub(now), "too many failed logins; retry later")
	}
	return &reservation{a.Store, ids}, nil
}

// reservation is a login's reserved attempts.
type reservation struct {
	st  wnms.SessionStore
	ids []int64
}

// release gives the attempts back: the login did not fail.
func (r *reservation) release(ctx context.Context) error { return r.st.ReleaseAttempts(ctx, r.ids) }

func addrBucket(addr string) string { return "addr:" + addr }
func keyBucket(keyID string) string { return "key:" + keyID }

// failed counts a failed login for the metrics and answers it.
func (a *Service) failed() error {
	if a.OnLoginFailure != nil {
		a.OnLoginFailure()
	}
	return errBadCredentials()
}

// hashSlot waits for a free password-hashing slot; ok false after HashWait.
func (a *Service) hashSlot(ctx context.Context) (done func(), err error) {
	t := time.NewTimer(a.HashWait)
	defer t.Stop()
	select {
	case a.hashSlots <- struct{}{}:
		return func() { <-a.hashSlots }, nil
	case <-t.C:
		return nil, rateLimited(time.Second, "the server is busy checking passwords; retry shortly")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Hash hashes a new password, waiting for a hashing slot.
func (a *Service) Hash(ctx context.Context, password string) (string, error) {
	done, err := a.hashSlot(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	return HashPassword(password, a.Argon)
}

// dummyHash makes a guess for an unknown or locked user cost as much as a
// real one: it is made with the server's own parameters on first use.
func (a *Service) dummyHash() string {
	a.dummyOnce.Do(func() { a.dummy, _ = HashPassword("wnms-timing-equalizer", a.Argon) })
	return a.dummy
}

// judge checks a password guess against a user (nil: unknown user) while
// holding a hashing slot. A known user's guess is reserved first
// (Store.ReserveGuess), so at most MaxFailures guesses are ever judged
// before the user is locked; the guess that reaches MaxFailures and fails
// locks the user and ends its sessions.
func (a *Service) judge(ctx context.Context, u *wnms.User, hash, password string) (bool, error) {
	done, err := a.hashSlot(ctx)
	if err != nil {
		return false, err
	}
	defer done()
	n, ok := 0, false
	if u != nil {
		if n, ok, err = a.Store.ReserveGuess(ctx, u.UserID, a.MaxFailures); err != nil {
			return false, err
		}
	}
	if !ok {
		CheckPassword(a.dummyHash(), password)
		return false, nil
	}
	if CheckPassword(hash, password) {
		return true, a.Store.LoginSucceeded(ctx, u.UserID)
	}
	if n >= a.MaxFailures {
		if err := a.Store.LockUser(ctx, u.UserID, a.Now().Add(a.LockFor).UnixMilli()); err != nil {
			return false, err
		}
		if a.OnUserLocked != nil {
			a.OnUserLocked(u)
		}
	}
	return false, nil
}

// LoginKey opens a session with an API key. Any failure is
// INVALID_CREDENTIALS, whatever its cause; wrong values are throttled per
// source address and per key id (429), and never lock the key's user: a
// 256-bit secret cannot be guessed.
func (a *Service) LoginKey(ctx context.Context, req LoginRequest, keyID, keyValue string) (*Login, error) {
	res, err := a.attempt(ctx, addrBucket(req.Addr), keyBucket(keyID))
	if err != nil {
		return nil, err
	}
	k, err := a.Store.APIKey(ctx, keyID)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		CheckKey(a.Secret, keyID, keyValue, nil)
		auditActor(ctx, wnms.OnPremCustomer, wnms.AuditActor{KeyID: keyID})
		return nil, a.failed()
	}
	if err != nil {
		return nil, err
	}
	auditActor(ctx, k.CustomerID, wnms.AuditActor{UserID: k.UserID, LoginID: k.LoginID, KeyID: keyID})
	if !CheckKey(a.Secret, keyID, keyValue, k.Hash) {
		return nil, a.failed()
	}
	u, err := a.Store.User(ctx, 0, k.UserID)
	if err != nil {
		return nil, err
	}
	auditActor(ctx, u.CustomerID, wnms.AuditActor{UserID: u.UserID, LoginID: u.LoginID, KeyID: keyID, Role: u.Role})
	if u.Locked(a.Now()) {
		return nil, a.failed()
	}
	return a.open(ctx, req, u, keyID, false, res)
}

// LoginPassword opens a session for a LOCAL user. A user of another type
// gets UNSUPPORTED_AUTHENTICATION_TYPE; every other failure is
// INVALID_CREDENTIALS. Attempts are throttled per source address (429),
// and at most MaxFailures wrong guesses are judged before the user is
// locked.
func (a *Service) LoginPassword(ctx context.Context, req LoginRequest, username, password string) (*Login, error) {
	res, err := a.attempt(ctx, addrBucket(req.Addr))
	if err != nil {
		return nil, err
	}
	u, hash, err := a.Store.UserByLogin(ctx, username)
	if err == nil {
		auditActor(ctx, u.CustomerID, wnms.AuditActor{UserID: u.UserID, LoginID: u.LoginID, Role: u.Role})
	} else if len(username) <= 256 {
		auditActor(ctx, wnms.OnPremCustomer, wnms.AuditActor{LoginID: username})
	}
	switch {
	case wnms.ErrorCode(err) == wnms.ResourceNotFound:
		u = nil
	case err != nil:
		return nil, err
	case u.UserType != wnms.UserTypeLocal:
		if err := res.release(ctx); err != nil {
			return nil, err
		}
		return nil, wnms.Errorf(wnms.UnsupportedAuthType, "this account does not log in with a password")
	}
	ok, err := a.judge(ctx, u, hash, password)
	if wnms.ErrorCode(err) == wnms.RateLimited {
		// Nothing was judged: the attempt does not count.
		if rerr := res.release(ctx); rerr != nil {
			return nil, rerr
		}
	}
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, a.failed()
	}
	restricted := u.PasswordExpired(a.Now()) || u.PasswordChangeEnforced
	if restricted {
		u.PasswordChangeEnforced = true
	}
	return a.open(ctx, req, u, "", restricted, res)
}

// CheckOwnPassword judges the old password of a logged-in user changing its
// own (ownpassword) under the same rules as a login: the guess counts
// toward the user's lockout and the address throttle.
func (a *Service) CheckOwnPassword(ctx context.Context, addr string, u *wnms.User, password string) (bool, error) {
	res, err := a.attempt(ctx, addrBucket(addr))
	if err != nil {
		return false, err
	}
	hash, err := a.Store.PasswordHash(ctx, u.UserID)
	if err != nil {
		return false, err
	}
	ok, err := a.judge(ctx, u, hash, password)
	if err != nil || !ok {
		if !ok && err == nil && a.OnLoginFailure != nil {
			a.OnLoginFailure()
		}
		if wnms.ErrorCode(err) == wnms.RateLimited {
			if rerr := res.release(ctx); rerr != nil {
				return false, rerr
			}
		}
		return false, err
	}
	return true, res.release(ctx)
}

// open opens the session of a login that succeeded, giving back its
// reserved attempts with it.
func (a *Service) open(ctx context.Context, req LoginRequest, u *wnms.User, keyID string, restricted bool, res *reservation) (*Login, error) {
	now := a.Now().UnixMilli()
	token := NewSessionToken()
	s := &wnms.Session{
		TokenHash: TokenHash(token), UserID: u.UserID, CustomerID: u.CustomerID, KeyID: keyID,
		ClientIdentifier: req.ClientIdentifier, Timeout: req.Timeout, CreatedAt: now,
		ExpiresAt: now + int64(req.Timeout)*1000, ClusterChildren: req.ClusterChildren, PasswordChange: restricted,
	}
	if err := a.Store.CreateSession(ctx, s, res.ids); err != nil {
		// The credentials were right: the attempts are given back even so
		// (they went back with the session's transaction, which failed).
		if rerr := res.release(context.WithoutCancel(ctx)); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	return &Login{Token: token, Session: s, User: u}, nil
}

// Authenticate resolves a session token to its caller. No token is
// SESSION_REQUIRED; an unknown, ended or expired one is SESSION_EXPIRED.
// Sessions are cached while the store's auth revision stays the same and
// no auth event names them, so a logout, lock or revocation anywhere ends
// the session here at once (this process) or within moments (another
// replica). A cached session that looks expired is read again first:
// another replica may have kept it alive.
func (a *Service) Authenticate(ctx context.Context, token string) (*wnms.Caller, error) {
	if token == "" {
		return nil, wnms.Errorf(wnms.SessionRequired, "log in first: no JSESSIONID cookie")
	}
	if len(token) > 128 {
		return nil, wnms.Errorf(wnms.SessionExpired, "session expired or ended")
	}
	hash := TokenHash(token)
	now := a.Now()
	rev, cacheable := a.Store.AuthRevision()
	var e *cachedSession
	var epoch uint64
	if cacheable {
		e, epoch = a.cache.get(hash, rev)
	}
	if e == nil || now.UnixMilli() >= e.stale || e.session.Expired(now) {
		s, u, err := a.Store.SessionUser(ctx, hash)
		if err != nil {
			return nil, err
		}
		if s.PasswordChange {
			u.PasswordChangeEnforced = true
		}
		u.Derive(now)
		if e, err = newCachedSession(s, u, now); err != nil {
			return nil, err
		}
		if cacheable && !s.Expired(now) {
			a.cache.put(hash, rev, epoch, e)
		}
	}
	if e.session.Expired(now) || e.user.CustomerLocked {
		return nil, wnms.Errorf(wnms.SessionExpired, "session expired or ended")
	}
	c := wnms.NewCaller(e.user, e.session, a.Store.LocationPaths)
	c.UserJSON = e.userJSON
	return c, nil
}

// KeepAlive moves the session's expiry to now + its timeout.
func (a *Service) KeepAlive(ctx context.Context, c *wnms.Caller) error {
	ok, err := a.Store.ExtendSession(ctx, c.Session.TokenHash, a.Now().UnixMilli()+int64(c.Session.Timeout)*1000)
	if err != nil {
		return err
	}
	if !ok {
		return wnms.Errorf(wnms.SessionExpired, "session expired or ended")
	}
	return nil
}

// Logout ends the session.
func (a *Service) Logout(ctx context.Context, c *wnms.Caller) error {
	return a.Store.DeleteSession(ctx, c.Session.TokenHash)
}

// NewKey creates an API key for a user of userType API and returns it with
// its value, which is never stored.
func (a *Service) NewKey(ctx context.Context, u *wnms.User) (*wnms.APIKey, string, error) {
	return a.newKey(ctx, u, false)
}

// NewClusterParentKey is NewKey for a cluster parent: the key's sessions
// may forward calls for the parent's users (X-Wnms-Acting-For and
// X-Wnms-Role-Cap), which every other session is refused.
func (a *Service) NewClusterParentKey(ctx context.Context, u *wnms.User) (*wnms.APIKey, string, error) {
	return a.newKey(ctx, u, true)
}

func (a *Service) newKey(ctx context.Context, u *wnms.User, clusterParent bool) (*wnms.APIKey, string, error) {
	if u.UserType != wnms.UserTypeAPI {
		return nil, "", wnms.Invalid("userId", "user %d is of userType %s; keys belong to API users", u.UserID, u.UserType)
	}
	k := &wnms.APIKey{KeyID: NewKeyID(), UserID: u.UserID, LoginID: u.LoginID, CustomerID: u.CustomerID, ClusterParent: clusterParent}
	value := NewKeyValue()
	k.Hash = KeyHash(a.Secret, k.KeyID, value)
	if err := a.Store.CreateAPIKey(ctx, k); err != nil {
		return nil, "", err
	}
	return k, value, nil
}

// CreateKeyWithValue stores a key whose id and value are given (the
// bootstrap pair from the environment), made for a cluster parent when
// clusterParent is set (NewClusterParentKey).
func (a *Service) CreateKeyWithValue(ctx context.Context, u *wnms.User, keyID, value string, clusterParent bool) error {
	if keyID == "" || value == "" {
		return errors.New("key id and value must both be set")
	}
	k := &wnms.APIKey{KeyID: keyID, UserID: u.UserID, Hash: KeyHash(a.Secret, keyID, value), ClusterParent: clusterParent}
	return a.Store.CreateAPIKey(ctx, k)
}

// SecretSetting is the store setting holding the server secret.
const SecretSetting = "server_secret"

// LoadSecret returns the server secret, creating it on first use. Every
// replica and the CLI read the same one from the store.
func LoadSecret(ctx context.Context, st interface {
	SettingOrInit(ctx context.Context, name string, init func() string) (string, error)
}) ([]byte, error) {
	v, err := st.SettingOrInit(ctx, SecretSetting, func() string { return RandomToken(32) })
	if err != nil {
		return nil, err
	}
	return []byte(v), nil
}

// RetryAfter formats a wait as whole seconds for the Retry-After header.
func RetryAfter(d time.Duration) string {
	s := int((d + time.Second - 1) / time.Second)
	return strconv.Itoa(s)
}

// auditActor names who a login is, in the audit record of its call: the
// user it opens a session for, or the loginId or key id a failed attempt
// named (an unknown one is the on-premises customer's to see).
func auditActor(ctx context.Context, customerID int64, a wnms.AuditActor) {
	if e := wnms.AuditFrom(ctx); e != nil {
		e.SetActor(customerID, a)
	}
}
