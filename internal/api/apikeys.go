package api

import (
	"net/http"

	"github.com/wnms/wnms/internal/access"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// listAPIKeys is GET /apikeys: the keys of the users of the caller's
// customer that the caller may manage (role not above its own, locations
// inside its own), never their values.
func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	ks, err := s.Store.APIKeys(r.Context(), c.CustomerID())
	if err != nil {
		return err
	}
	users, err := s.Store.Users(r.Context(), c.CustomerID())
	if err != nil {
		return err
	}
	manageable := make(map[int64]bool, len(users))
	ok, err := access.Manageable(r.Context(), s.Store, c, users)
	if err != nil {
		return err
	}
	for i := range users {
		manageable[users[i].UserID] = ok[i]
	}
	out := ks[:0]
	for _, k := range ks {
		if manageable[k.UserID] {
			out = append(out, k)
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// newKey is the answer that shows a key value, once.
type newKey struct {
	KeyID    string `json:"keyId"`
	KeyValue string `json:"keyValue"`
	UserID   int64  `json:"userId"`
}

// createAPIKey is PUT /apikeys {userId}: a new key for a user of userType
// API that the caller may manage.
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	var b struct {
		UserID *int64 `json:"userId"`
	}
	if err := httpkit.DecodeJSON(w, r, &b, httpkit.MaxJSONBody); err != nil {
		return err
	}
	if b.UserID == nil {
		return wnms.Invalid("userId", "required")
	}
	u, err := s.Store.User(r.Context(), c.CustomerID(), *b.UserID)
	if err != nil {
		return err
	}
	if err := access.Manage(r.Context(), s.Store, c, u); err != nil {
		return err
	}
	k, value, err := s.Auth.NewKey(r.Context(), u)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, newKey{KeyID: k.KeyID, KeyValue: value, UserID: u.UserID})
	return nil
}

// deleteAPIKey is DELETE /apikeys/{keyId}: the key and its sessions end.
func (s *Server) deleteAPIKey(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	k, err := s.Store.APIKey(r.Context(), r.PathValue("keyId"))
	if err != nil {
		return err
	}
	if k.CustomerID != c.CustomerID() {
		return wnms.NotFound("no key %q", r.PathValue("keyId"))
	}
	u, err := s.Store.User(r.Context(), c.CustomerID(), k.UserID)
	if err != nil {
		return err
	}
	if err := access.Manage(r.Context(), s.Store, c, u); err != nil {
		return err
	}
	if err := s.Store.DeleteAPIKey(r.Context(), c.CustomerID(), k.KeyID); err != nil {
		return err
	}
	return noContent(w)
}
