package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// userBody is the body of PUT and POST /users.
type userBody struct {
	User     json.RawMessage `json:"user"`
	Password *string         `json:"password"`
}

// decodeUserBody reads the body of PUT and POST /users.
func decodeUserBody(w http.ResponseWriter, r *http.Request) (userBody, error) {
	var b userBody
	if err := httpkit.DecodeJSON(w, r, &b, httpkit.MaxJSONBody); err != nil {
		return b, err
	}
	if len(b.User) == 0 || string(b.User) == "null" {
		return b, wnms.Invalid("user", "required")
	}
	return b, nil
}

// listUsers is GET /users: the users of the caller's customer whose
// locations lie in the caller's scope, and the caller.
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	fields, err := parseFields(r, userFields)
	if err != nil {
		return err
	}
	users, err := s.Accounts.List(r.Context(), wnms.CallerFrom(r.Context()))
	if err != nil {
		return err
	}
	if fields != nil {
		body, err := selectEach(users, fields)
		if err != nil {
			return err
		}
		httpkit.WriteJSON(w, http.StatusOK, body)
		return nil
	}
	httpkit.WriteJSON(w, http.StatusOK, users)
	return nil
}

// userFields are the fields a user answer may be cut to with fields=.
var userFields = newFieldSet(jsonFieldNames(wnms.User{}))

// currentUser is GET /users/current.
func (s *Server) currentUser(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	fields, err := parseFields(r, userFields)
	if err != nil {
		return err
	}
	if fields != nil {
		body, err := selectFields(c.User, fields)
		if err != nil {
			return err
		}
		httpkit.WriteRawJSON(w, http.StatusOK, body)
		return nil
	}
	if c.UserJSON != nil {
		httpkit.WriteRawJSON(w, http.StatusOK, c.UserJSON)
		return nil
	}
	httpkit.WriteJSON(w, http.StatusOK, c.User)
	return nil
}

// features is GET /users/features.
func (s *Server) features(w http.ResponseWriter, r *http.Request) error {
	httpkit.WriteJSON(w, http.StatusOK, wnms.Features(wnms.CallerFrom(r.Context()).Role()))
	return nil
}

// listCustomFields is GET /users/customfields.
func (s *Server) listCustomFields(w http.ResponseWriter, r *http.Request) error {
	fs, err := s.Store.CustomFields(r.Context(), wnms.CallerFrom(r.Context()).CustomerID())
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, fs)
	return nil
}

// createCustomField is PUT /users/customfields {name} (our extension).
func (s *Server) createCustomField(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Name string `json:"name"`
	}
	if err := httpkit.DecodeJSON(w, r, &b, httpkit.MaxJSONBody); err != nil {
		return err
	}
	b.Name = strings.TrimSpace(b.Name)
	if err := wnms.CheckText("name", b.Name, 1, wnms.MaxCustomFieldName); err != nil {
		return err
	}
	f, err := s.Store.CreateCustomField(r.Context(), wnms.CallerFrom(r.Context()).CustomerID(), b.Name)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, f)
	return nil
}

// createUser is PUT /users: {user, password}.
func (s *Server) createUser(w http.ResponseWriter, r *http.Request) error {
	b, err := decodeUserBody(w, r)
	if err != nil {
		return err
	}
	u, err := s.Accounts.Create(r.Context(), wnms.CallerFrom(r.Context()), b.User, b.Password)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, u)
	return nil
}

// modifyUser is POST /users: the user named by userId (or loginId) gets the
// fields the body sends; the rest stay as they are.
func (s *Server) modifyUser(w http.ResponseWriter, r *http.Request) error {
	b, err := decodeUserBody(w, r)
	if err != nil {
		return err
	}
	u, err := s.Accounts.Modify(r.Context(), wnms.CallerFrom(r.Context()), b.User, b.Password)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, u)
	return nil
}

// changeOwnPassword is POST /users/ownpassword: true when changed, false
// when the old password is wrong (a failed login attempt).
func (s *Server) changeOwnPassword(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	var b struct {
		NewPassword *string `json:"newPassword"`
		OldPassword *string `json:"oldPassword"`
	}
	if err := httpkit.DecodeJSON(w, r, &b, httpkit.MaxJSONBody); err != nil {
		return err
	}
	if b.OldPassword == nil {
		return wnms.Invalid("oldPassword", "required")
	}
	if b.NewPassword == nil {
		return wnms.Invalid("newPassword", "required")
	}
	if c.User.UserType != wnms.UserTypeLocal {
		return wnms.Invalid("userType", "a %s user has no password to change here", c.User.UserType)
	}
	if err := auth.CheckPasswordRules(*b.NewPassword); err != nil {
		return wnms.Invalid("newPassword", "%s", err.Error())
	}
	if *b.NewPassword == *b.OldPassword {
		return wnms.Invalid("newPassword", "must differ from the old password")
	}
	ok, err := s.Auth.CheckOwnPassword(r.Context(), clientAddr(r), c.User, *b.OldPassword)
	if err != nil {
		return err
	}
	if !ok {
		httpkit.WriteJSON(w, http.StatusOK, false)
		return nil
	}
	newHash, err := s.Auth.Hash(r.Context(), *b.NewPassword)
	if err != nil {
		return err
	}
	// The user's other sessions end; this one stays, free of any
	// password-change restriction.
	if err := s.Store.SetPassword(r.Context(), c.User.UserID, newHash, c.Session.TokenHash); err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, true)
	return nil
}

// deleteUser is DELETE /users/{userid}.
func (s *Server) deleteUser(w http.ResponseWriter, r *http.Request) error {
	id, err := httpkit.PathInt(r, "userid")
	if err != nil {
		return err
	}
	if err := s.Accounts.Delete(r.Context(), wnms.CallerFrom(r.Context()), id); err != nil {
		return err
	}
	return noContent(w)
}
