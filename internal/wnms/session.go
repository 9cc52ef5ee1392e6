package wnms

import "time"

// Session is a login session. The store knows it only by the hash of its
// token; the token itself lives in the client's JSESSIONID cookie.
type Session struct {
	TokenHash        string
	UserID           int64
	CustomerID       int64
	KeyID            string // the API key used, if any
	ClientIdentifier string
	Timeout          int // seconds
	CreatedAt        int64
	ExpiresAt        int64 // ms
	ClusterChildren  bool  // getClusterChildrenData
	PasswordChange   bool  // password expired: only ownpassword, logout, users/current
	// ClusterParent: the session was opened with a key made for a cluster
	// parent, the only sessions whose calls may carry X-Wnms-Acting-For
	// and X-Wnms-Role-Cap.
	ClusterParent bool
}

// Expired reports whether the session has expired at now.
func (s *Session) Expired(now time.Time) bool { return now.UnixMilli() >= s.ExpiresAt }

// APIKey is an API key. Its value is never stored, only a keyed hash.
type APIKey struct {
	KeyID      string `json:"keyId"`
	UserID     int64  `json:"userId"`
	LoginID    string `json:"loginId"`
	CustomerID int64  `json:"customerId"`
	CreatedAt  int64  `json:"createdAt"`
	LastUsedAt int64  `json:"lastUsedAt"`
	// ClusterParent: the key was made for a cluster parent
	// (wnms apikey create --cluster-parent); its sessions may forward
	// calls for the parent's users.
	ClusterParent bool   `json:"clusterParent"`
	Hash          []byte `json:"-"`
}

// AuthEvent says what a committed change did to sessions: ended or altered
// one session, everything of one user (a lock, a new password, a changed or
// deleted user, a revoked key), or anything at all. Caches drop what it
// names.
type AuthEvent struct {
	Session  string // token hash of the one session concerned
	User     int64  // the user whose sessions are concerned
	All      bool   // anything may have changed
	Extended bool   // only an expiry moved forward (a keep-alive)
}
