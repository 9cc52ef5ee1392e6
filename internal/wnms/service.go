package wnms

import "context"

// UserStore keeps users, their passwords, lockout counters and custom
// fields. Methods return RESOURCE_NOT_FOUND for unknown users and
// DUPLICATE_ENTITY for a taken loginId.
type UserStore interface {
	Users(ctx context.Context, customerID int64) ([]User, error)
	User(ctx context.Context, customerID, userID int64) (*User, error)
	UserByLogin(ctx context.Context, loginID string) (*User, string, error)
	PasswordHash(ctx context.Context, userID int64) (string, error)
	CreateUser(ctx context.Context, u *User, passwordHash string) error
	ModifyUser(ctx context.Context, customerID, userID int64, passwordHash string, edit func(old *User, in UserReads) (*User, error)) (*User, error)
	SetPassword(ctx context.Context, userID int64, hash, keepSession string) error
	DeleteUser(ctx context.Context, customerID, userID int64) error
	ReserveGuess(ctx context.Context, userID int64, max int) (n int, ok bool, err error)
	LockUser(ctx context.Context, userID int64, until int64) error
	LoginSucceeded(ctx context.Context, userID int64) error
	CustomFields(ctx context.Context, customerID int64) ([]CustomField, error)
	CreateCustomField(ctx context.Context, customerID int64, name string) (*CustomField, error)
	CountUsers(ctx context.Context) (int, error)
	EnsureCustomer(ctx context.Context, id int64, name string) error
}

// UserReads is what an edit of a user reads inside the edit's
// transaction: locations, to check scope, and custom field definitions.
type UserReads interface {
	Location(ctx context.Context, id int64) (*Location, error)
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
	CustomFields(ctx context.Context, customerID int64) ([]CustomField, error)
}

// SessionStore keeps sessions, API keys and the per-address login failure
// log. An unknown session is SESSION_EXPIRED.
type SessionStore interface {
	// CreateSession stores s for a login that succeeded: in the same
	// transaction it gives back the login's reserved attempts (release)
	// and marks the session's API key, if any, used now.
	CreateSession(ctx context.Context, s *Session, release []int64) error
	SessionUser(ctx context.Context, tokenHash string) (*Session, *User, error)
	ExtendSession(ctx context.Context, tokenHash string, expiresAt int64) (bool, error)
	DeleteSession(ctx context.Context, tokenHash string) error
	ActiveSessions(ctx context.Context) (int, error)
	ReserveAttempt(ctx context.Context, buckets []string, since int64, limit int) (ids []int64, retryAt int64, ok bool, err error)
	ReleaseAttempts(ctx context.Context, ids []int64) error
	CreateAPIKey(ctx context.Context, k *APIKey) error
	APIKey(ctx context.Context, keyID string) (*APIKey, error)
	APIKeys(ctx context.Context, customerID int64) ([]APIKey, error)
	DeleteAPIKey(ctx context.Context, customerID int64, keyID string) error
	// AuthRevision changes whenever every cached session may be stale; ok
	// false means sessions must be read from the store on every request.
	AuthRevision() (rev uint64, ok bool)
	// SubscribeAuth registers f to hear which sessions or users each
	// committed change ended or altered, from this process and others.
	SubscribeAuth(f func(AuthEvent))
}

// LocationStore keeps the location tree. Unknown locations are
// RESOURCE_NOT_FOUND; a taken sibling name is DUPLICATE_ENTITY.
type LocationStore interface {
	Locations(ctx context.Context, customerID int64) ([]*Location, error)
	Location(ctx context.Context, id int64) (*Location, error)
	LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error)
	CreateLocation(ctx context.Context, l *Location) error
	UpdateLocation(ctx context.Context, l *Location) error
	DeleteLocation(ctx context.Context, id int64) error
}

// PolicyStore keeps the global policies (api.md §9), one of each
// type per customer. A customer that never stored one has the built-in
// default. Policies are kept and returned with their secrets in clear:
// callers that answer a client must mask them (SNMPPolicy.Masked).
type PolicyStore interface {
	// SNMPPolicy returns the SNMP policy in force for the customer, secrets
	// unmasked: the stored one, or DefaultSNMPPolicy(). This is what the SNMP
	// runtime (traps and agent, api.md §9) reads; it never reaches a
	// client unmasked.
	SNMPPolicy(ctx context.Context, customerID int64) (*SNMPPolicy, error)
	// UpdateSNMPPolicy replaces the customer's SNMP policy by what update
	// makes of the policy in force, in one transaction, so that masked
	// secrets resolve against exactly the policy they replace. An error from
	// update is returned as is and nothing changes.
	UpdateSNMPPolicy(ctx context.Context, customerID int64, update func(current *SNMPPolicy) (*SNMPPolicy, error)) (*SNMPPolicy, error)
	// HotspotSSIDPolicy returns the hotspot SSID policy in force for the
	// customer: the stored one, or DefaultHotspotSSIDPolicy().
	HotspotSSIDPolicy(ctx context.Context, customerID int64) (*HotspotSSIDPolicy, error)
	// PutHotspotSSIDPolicy replaces the customer's hotspot SSID policy.
	PutHotspotSSIDPolicy(ctx context.Context, customerID int64, p *HotspotSSIDPolicy) error
	// DataSources returns the customer's data source configuration,
	// secrets in clear (empty when none is stored).
	DataSources(ctx context.Context, customerID int64) (*DataSources, error)
	// UpdateDataSources replaces it by what update returns given the
	// current one, in one transaction; an error from update changes
	// nothing.
	UpdateDataSources(ctx context.Context, customerID int64, update func(current *DataSources) (*DataSources, error)) (*DataSources, error)
	// AllDataSources returns every customer's configuration that lists
	// a source or a poller.
	AllDataSources(ctx context.Context) (map[int64]*DataSources, error)
	// PollerStates returns the state of the customer's pollers as their
	// servers recorded it with their leases, by name.
	PollerStates(ctx context.Context, customerID int64) (map[string]PollerState, error)
}
