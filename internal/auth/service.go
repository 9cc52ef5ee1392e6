package auth

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// Service opens, checks and ends sessions, and keeps the lockout and
// throttling rules of decisions.md §6 and §19.
type Service struct {
	Store  wnms.Store
	Secret []byte // keys API-key hashes
	Argon  Argon2Params
	Now    func() time.Time

	MaxFailures  int           // consecutive failures that lock a user (5)
	LockFor      time.Duration // how long a lock lasts (15 min)
	AddrFailures int           // failures per address per AddrWindow before 429 (20)
	AddrWindow   time.Duration // (1 min)

	// OnUserLocked is called when failed logins lock a user.
	OnUserLocked func(u *wnms.User)
	// OnLoginFailure is called for every failed login.
	OnLoginFailure func()

	cache sessionCache
}

// NewService returns a Service with the documented defaults.
func NewService(st wnms.Store, secret []byte) *Service {
	return &Service{Store: st, Secret: secret, Argon: DefaultArgon2, Now: time.Now,
		MaxFailures: 5, LockFor: 15 * time.Minute, AddrFailures: 20, AddrWindow: time.Minute}
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

// Throttled returns how long addr must wait before trying to log in again,
// or 0 when it may try now.
func (a *Service) Throttled(ctx context.Context, addr string) (time.Duration, error) {
	now := a.Now()
	n, oldest, err := a.Store.AddrFailures(ctx, addr, now.Add(-a.AddrWindow).UnixMilli())
	if err != nil || n < a.AddrFailures {
		return 0, err
	}
	wait := time.UnixMilli(oldest).Add(a.AddrWindow).Sub(now)
	if wait < time.Second {
		wait = time.Second
	}
	return wait, nil
}

func (a *Service) fail(ctx context.Context, addr string, u *wnms.User) error {
	if a.OnLoginFailure != nil {
		a.OnLoginFailure()
	}
	now := a.Now()
	if _, err := a.Store.AddrFailure(ctx, addr, now.Add(-a.AddrWindow).UnixMilli()); err != nil {
		return err
	}
	if u != nil && !u.Locked(now) {
		locked, err := a.Store.LoginFailed(ctx, u.UserID, a.MaxFailures, now.Add(a.LockFor).UnixMilli())
		if err != nil {
			return err
		}
		if locked && a.OnUserLocked != nil {
			a.OnUserLocked(u)
		}
	}
	return errBadCredentials()
}

// LoginKey opens a session with an API key. Any failure is
// INVALID_CREDENTIALS, whatever its cause.
func (a *Service) LoginKey(ctx context.Context, req LoginRequest, keyID, keyValue string) (*Login, error) {
	k, err := a.Store.APIKey(ctx, keyID)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return nil, a.fail(ctx, req.Addr, nil)
	}
	if err != nil {
		return nil, err
	}
	u, err := a.Store.User(ctx, 0, k.UserID)
	if err != nil {
		return nil, err
	}
	if !CheckKey(a.Secret, keyID, keyValue, k.Hash) {
		return nil, a.fail(ctx, req.Addr, u)
	}
	if u.Locked(a.Now()) {
		return nil, a.fail(ctx, req.Addr, nil)
	}
	if err := a.Store.TouchAPIKey(ctx, keyID); err != nil {
		return nil, err
	}
	return a.open(ctx, req, u, keyID, false)
}

// dummyHash makes a failed lookup cost as much as a wrong password.
var dummyHash, _ = HashPassword("wnms-timing-equalizer", DefaultArgon2)

// LoginPassword opens a session for a LOCAL user. A user of another type
// gets UNSUPPORTED_AUTHENTICATION_TYPE; every other failure is
// INVALID_CREDENTIALS.
func (a *Service) LoginPassword(ctx context.Context, req LoginRequest, username, password string) (*Login, error) {
	u, hash, err := a.Store.UserByLogin(ctx, username)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		CheckPassword(dummyHash, password)
		return nil, a.fail(ctx, req.Addr, nil)
	}
	if err != nil {
		return nil, err
	}
	if u.UserType != wnms.UserTypeLocal {
		return nil, wnms.Errorf(wnms.UnsupportedAuthType, "this account does not log in with a password")
	}
	if !CheckPassword(hash, password) {
		return nil, a.fail(ctx, req.Addr, u)
	}
	if u.Locked(a.Now()) {
		return nil, a.fail(ctx, req.Addr, nil)
	}
	restricted := u.PasswordExpired(a.Now()) || u.PasswordChangeEnforced
	if restricted {
		u.PasswordChangeEnforced = true
	}
	return a.open(ctx, req, u, "", restricted)
}

func (a *Service) open(ctx context.Context, req LoginRequest, u *wnms.User, keyID string, restricted bool) (*Login, error) {
	if err := a.Store.LoginSucceeded(ctx, u.UserID); err != nil {
		return nil, err
	}
	now := a.Now().UnixMilli()
	token := NewSessionToken()
	s := &wnms.Session{
		TokenHash: TokenHash(token), UserID: u.UserID, CustomerID: u.CustomerID, KeyID: keyID,
		ClientIdentifier: req.ClientIdentifier, Timeout: req.Timeout, CreatedAt: now,
		ExpiresAt: now + int64(req.Timeout)*1000, ClusterChildren: req.ClusterChildren, PasswordChange: restricted,
	}
	if err := a.Store.CreateSession(ctx, s); err != nil {
		return nil, err
	}
	return &Login{Token: token, Session: s, User: u}, nil
}

// Authenticate resolves a session token to its caller. No token is
// SESSION_REQUIRED; an unknown, ended or expired one is SESSION_EXPIRED.
// Sessions are cached for as long as the store's auth revision stays the
// same, so a logout anywhere ends the session here at once.
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
	if cacheable {
		e = a.cache.get(hash, rev)
	}
	if e == nil || now.UnixMilli() >= e.stale {
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
		if cacheable {
			a.cache.put(hash, rev, e)
		}
	}
	if e.session.Expired(now) || e.user.CustomerLocked {
		a.cache.drop(hash)
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
	if u.UserType != wnms.UserTypeAPI {
		return nil, "", wnms.Invalid("userId", "user %d is of userType %s; keys belong to API users", u.UserID, u.UserType)
	}
	k := &wnms.APIKey{KeyID: NewKeyID(), UserID: u.UserID, LoginID: u.LoginID, CustomerID: u.CustomerID}
	value := NewKeyValue()
	k.Hash = KeyHash(a.Secret, k.KeyID, value)
	if err := a.Store.CreateAPIKey(ctx, k); err != nil {
		return nil, "", err
	}
	return k, value, nil
}

// CreateKeyWithValue stores a key whose id and value are given (the
// bootstrap pair from the environment).
func (a *Service) CreateKeyWithValue(ctx context.Context, u *wnms.User, keyID, value string) error {
	if keyID == "" || value == "" {
		return errors.New("key id and value must both be set")
	}
	k := &wnms.APIKey{KeyID: keyID, UserID: u.UserID, Hash: KeyHash(a.Secret, keyID, value)}
	return a.Store.CreateAPIKey(ctx, k)
}

// SecretSetting is the store setting holding the server secret.
const SecretSetting = "server_secret"

// LoadSecret returns the server secret, creating it on first use. Every
// replica and the CLI read the same one from the store.
func LoadSecret(ctx context.Context, st wnms.Store) ([]byte, error) {
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

// CountFailure records a failed password check by a logged-in user (a wrong
// old password): it counts toward the user's lockout and the address limit.
func (a *Service) CountFailure(ctx context.Context, addr string, u *wnms.User) error {
	err := a.fail(ctx, addr, u)
	if wnms.ErrorCode(err) == wnms.InvalidCredentials {
		return nil
	}
	return err
}
