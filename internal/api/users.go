package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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

// passwordHash checks and hashes the password sent for a user of the given
// type. Only LOCAL users have one: required says a LOCAL user must send one
// (on create). Users of other types sign in elsewhere (API users by key),
// so whatever password their body carries is ignored and never stored:
// clients always send the {user, password} shape. An absent or empty
// password is "".
func (s *Server) passwordHash(ctx context.Context, userType string, pw *string, required bool) (string, error) {
	if userType != wnms.UserTypeLocal {
		return "", nil
	}
	if pw == nil || *pw == "" {
		if required {
			return "", wnms.Invalid("password", "required for a LOCAL user")
		}
		return "", nil
	}
	if err := auth.CheckPasswordRules(*pw); err != nil {
		return "", wnms.Invalid("password", "%s", err.Error())
	}
	return s.Auth.Hash(ctx, *pw)
}

// listUsers is GET /users: the users of the caller's customer whose
// locations lie in the caller's scope, and the caller.
func (s *Server) listUsers(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	users, err := s.Store.Users(r.Context(), c.CustomerID())
	if err != nil {
		return err
	}
	out := make([]wnms.User, 0, len(users))
	for i := range users {
		ok, err := s.inScope(r.Context(), c, &users[i])
		if err != nil {
			return err
		}
		if ok || users[i].UserID == c.User.UserID {
			out = append(out, users[i])
		}
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// inScope reports whether every allowed location of u lies in the caller's
// scope: only then may the caller see or manage u.
func (s *Server) inScope(ctx context.Context, c *wnms.Caller, u *wnms.User) (bool, error) {
	for _, l := range u.AllowedLocations {
		ok, err := s.seesLocation(ctx, c, l.ID)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// seesLocation reports whether the caller may see location id; an unknown
// location is not seen.
func (s *Server) seesLocation(ctx context.Context, c *wnms.Caller, id int64) (bool, error) {
	l, err := s.Store.Location(ctx, id)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return c.Sees(ctx, l)
}

// currentUser is GET /users/current.
func (s *Server) currentUser(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
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
	if err := checkText("name", b.Name, 1, 64); err != nil {
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
	c := wnms.CallerFrom(r.Context())
	b, err := decodeUserBody(w, r)
	if err != nil {
		return err
	}
	u := &wnms.User{UserType: wnms.UserTypeLocal, FontPref: "ENGLISH_ONLY", LogoutInterval: -1,
		AllowAccessMgmt: true, AllowSecurityMgmt: true}
	if err := unmarshalField("user", b.User, u); err != nil {
		return err
	}
	u.UserID, u.CustomerID = 0, c.CustomerID()
	u.ManualLock, u.LockedUntil = false, 0
	if u.UserType == "" {
		u.UserType = wnms.UserTypeLocal
	}
	if len(u.AllowedLocations) == 0 {
		u.AllowedLocations = append([]wnms.LocationID(nil), c.User.AllowedLocations...)
	}
	if err := s.checkUser(r.Context(), c, u); err != nil {
		return err
	}
	hash, err := s.passwordHash(r.Context(), u.UserType, b.Password, true)
	if err != nil {
		return err
	}
	if err := s.Store.CreateUser(r.Context(), u, hash); err != nil {
		return err
	}
	created, err := s.Store.User(r.Context(), c.CustomerID(), u.UserID)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, created)
	return nil
}

// modifyUser is POST /users: the user named by userId (or loginId) gets the
// fields the body sends; the rest stay as they are.
func (s *Server) modifyUser(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	b, err := decodeUserBody(w, r)
	if err != nil {
		return err
	}
	var ident struct {
		UserID          *int64  `json:"userId"`
		LoginID         *string `json:"loginId"`
		UserLockedState *string `json:"userLockedState"`
		UserType        *string `json:"userType"`
	}
	if err := unmarshalField("user", b.User, &ident); err != nil {
		return err
	}
	old, err := s.findUser(r.Context(), c, ident.UserID, ident.LoginID)
	if err != nil {
		return err
	}
	if err := s.checkManage(r.Context(), c, old); err != nil {
		return err
	}
	u := *old
	u.AllowedLocations = append([]wnms.LocationID(nil), old.AllowedLocations...)
	if err := unmarshalField("user", b.User, &u); err != nil {
		return err
	}
	u.UserID, u.CustomerID = old.UserID, old.CustomerID
	if ident.UserType != nil && *ident.UserType != old.UserType {
		return wnms.Invalid("userType", "cannot change from %s to %s", old.UserType, *ident.UserType)
	}
	u.UserType = old.UserType
	if ident.UserLockedState != nil && *ident.UserLockedState != old.UserLockedState {
		if c.Role().Access() != wnms.SuperUser && c.Role() != wnms.Administrator {
			return wnms.Errorf(wnms.AccessDenied, "only a SUPERUSER or ADMINISTRATOR may lock or unlock users")
		}
		switch *ident.UserLockedState {
		case wnms.NotLocked:
			u.ManualLock, u.LockedUntil = false, 0
		case wnms.UserLocked:
			if u.UserID == c.User.UserID {
				return wnms.Errorf(wnms.Conflict, "you cannot lock yourself")
			}
			u.ManualLock = true
		default:
			return wnms.Invalid("userLockedState", "must be %s or %s", wnms.NotLocked, wnms.UserLocked)
		}
	}
	if err := s.checkUser(r.Context(), c, &u); err != nil {
		return err
	}
	hash, err := s.passwordHash(r.Context(), u.UserType, b.Password, false)
	if err != nil {
		return err
	}
	if err := s.Store.UpdateUser(r.Context(), &u); err != nil {
		return err
	}
	if hash != "" {
		enforced := u.PasswordChangeEnforced
		// A password set by an administrator ends the user's sessions.
		if err := s.Store.SetPassword(r.Context(), u.UserID, hash, ""); err != nil {
			return err
		}
		if enforced {
			u.PasswordChangeEnforced = true
			if err := s.Store.UpdateUser(r.Context(), &u); err != nil {
				return err
			}
		}
	}
	updated, err := s.Store.User(r.Context(), c.CustomerID(), u.UserID)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, updated)
	return nil
}

// findUser finds a user of the caller's customer by id or login id.
func (s *Server) findUser(ctx context.Context, c *wnms.Caller, id *int64, login *string) (*wnms.User, error) {
	switch {
	case id != nil && *id != 0:
		return s.Store.User(ctx, c.CustomerID(), *id)
	case login != nil && *login != "":
		u, _, err := s.Store.UserByLogin(ctx, *login)
		if err != nil {
			return nil, err
		}
		if u.CustomerID != c.CustomerID() {
			return nil, wnms.NotFound("no user %q", *login)
		}
		return u, nil
	}
	return nil, wnms.Invalid("userId", "required: userId or loginId of the user to modify")
}

// checkManage enforces that the caller may manage target: its role is not
// above the caller's and its locations lie in the caller's scope.
func (s *Server) checkManage(ctx context.Context, c *wnms.Caller, target *wnms.User) error {
	if target.Role.Rank() > c.Role().Rank() {
		return wnms.Errorf(wnms.AccessDenied, "user %d has a role above yours", target.UserID)
	}
	ok, err := s.inScope(ctx, c, target)
	if err != nil {
		return err
	}
	if !ok && target.UserID != c.User.UserID {
		return wnms.Errorf(wnms.LocationAccessDenied, "user %d has locations outside yours", target.UserID)
	}
	return nil
}

// checkUser validates every field of a user to be stored by the caller.
func (s *Server) checkUser(ctx context.Context, c *wnms.Caller, u *wnms.User) error {
	u.LoginID = strings.TrimSpace(u.LoginID)
	if err := checkText("loginId", u.LoginID, 1, 64); err != nil {
		return err
	}
	if strings.IndexFunc(u.LoginID, unicode.IsSpace) >= 0 {
		return wnms.Invalid("loginId", "must not contain spaces")
	}
	for _, f := range []struct{ name, v string }{{"firstName", u.FirstName}, {"lastName", u.LastName}} {
		if err := checkText(f.name, f.v, 0, 64); err != nil {
			return err
		}
	}
	if u.Email != "" && !validEmail(u.Email) {
		return wnms.Invalid("email", "not an email address")
	}
	if !u.Role.Valid() {
		return wnms.Invalid("role", "must be VIEWER, OPERATOR, POWERUSER, ADMINISTRATOR or SUPERUSER")
	}
	if u.Role.Rank() > c.Role().Rank() {
		return wnms.Errorf(wnms.AccessDenied, "you may not grant role %s, which is above yours", u.Role)
	}
	switch u.UserType {
	case wnms.UserTypeLocal, wnms.UserTypeLDAP, wnms.UserTypeRADIUS, wnms.UserTypeAPI:
	default:
		return wnms.Invalid("userType", "must be LOCAL, LDAP, RADIUS or API")
	}
	if u.TimeZone != "" {
		if _, err := time.LoadLocation(u.TimeZone); err != nil || u.TimeZone == "Local" {
			return wnms.Invalid("timeZone", "unknown time zone id %q", u.TimeZone)
		}
	}
	if u.TimeZoneOffsetInMins < -720 || u.TimeZoneOffsetInMins > 840 {
		return wnms.Invalid("timeZonOffSetInMins", "must be -720 to 840")
	}
	switch u.FontPref {
	case "":
		u.FontPref = "ENGLISH_ONLY"
	case "ENGLISH_ONLY", "MULTILINGUAL":
	default:
		return wnms.Invalid("fontPref", "must be ENGLISH_ONLY or MULTILINGUAL")
	}
	if u.LangID != 0 {
		return wnms.Invalid("langId", "only ENGLISH (0) is supported")
	}
	if u.LogoutInterval != -1 && (u.LogoutInterval < 1 || u.LogoutInterval > 10080) {
		return wnms.Invalid("logoutInterval", "must be -1 or 1 to 10080 minutes")
	}
	ps := u.PasswdSettings
	if ps.PasswordExpires {
		if ps.PasswordExpiryDateTime <= 0 {
			return wnms.Invalid("passwdSettings.passwordExpiryDateTime", "required when passwordExpires is true")
		}
		if ps.PasswordExpiryDaysInterval <= 0 || ps.PasswordExpiryDaysInterval > 3650 {
			return wnms.Invalid("passwdSettings.passwordExpiryDaysInterval", "must be 1 to 3650 when passwordExpires is true")
		}
	}
	if ps.PasswordExpiryDateTime < 0 || ps.PasswordExpiryDaysInterval < 0 {
		return wnms.Invalid("passwdSettings", "times and intervals must not be negative")
	}
	if ps.PasswordExpiryWarningDays < 0 || ps.PasswordExpiryWarningDays > 365 {
		return wnms.Invalid("passwdSettings.passwordExpiryWarningDays", "must be 0 to 365")
	}
	if len(u.AllowedLocations) == 0 {
		return wnms.Invalid("allowedLocations", "at least one location is required")
	}
	if len(u.AllowedLocations) > 1000 {
		return wnms.Invalid("allowedLocations", "at most 1000 locations")
	}
	seen := map[int64]bool{}
	locs := u.AllowedLocations[:0]
	for _, l := range u.AllowedLocations {
		if l.Type == "" {
			l.Type = wnms.LocalLocationID
		}
		if l.Type != wnms.LocalLocationID {
			return wnms.Invalid("allowedLocations", "type must be %s", wnms.LocalLocationID)
		}
		l.ChildID = nil
		if seen[l.ID] {
			continue
		}
		seen[l.ID] = true
		_, err := s.locationFor(ctx, c, l.ID)
		if wnms.ErrorCode(err) == wnms.ResourceNotFound {
			return wnms.Invalid("allowedLocations", "no location %d", l.ID)
		}
		if err != nil {
			return err
		}
		locs = append(locs, l)
	}
	u.AllowedLocations = locs
	if u.UserDefinedFields != nil {
		if len(u.UserDefinedFields) > 0 {
			defs, err := s.Store.CustomFields(ctx, u.CustomerID)
			if err != nil {
				return err
			}
			byName := map[string]wnms.CustomField{}
			for _, d := range defs {
				byName[strings.ToLower(d.Name)] = d
			}
			seen := map[int64]bool{}
			for i, f := range u.UserDefinedFields {
				d, ok := byName[strings.ToLower(f.Name)]
				if !ok {
					for _, dd := range defs {
						if dd.ID == f.ID && f.Name == "" {
							d, ok = dd, true
						}
					}
				}
				if !ok {
					return wnms.Invalid("userDefinedFields", "no custom field %q", f.Name)
				}
				if seen[d.ID] {
					return wnms.Invalid("userDefinedFields", "field %q given twice", d.Name)
				}
				seen[d.ID] = true
				if err := checkText("userDefinedFields."+d.Name, f.Value, 0, 256); err != nil {
					return err
				}
				u.UserDefinedFields[i] = wnms.UserDefinedField{ID: d.ID, Name: d.Name, Value: f.Value}
			}
		}
	}
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
	c := wnms.CallerFrom(r.Context())
	id, err := pathInt(r, "userid")
	if err != nil {
		return err
	}
	target, err := s.Store.User(r.Context(), c.CustomerID(), id)
	if err != nil {
		return err
	}
	if target.UserID == c.User.UserID {
		return wnms.Errorf(wnms.Conflict, "you cannot delete yourself")
	}
	if err := s.checkManage(r.Context(), c, target); err != nil {
		return err
	}
	if err := s.Store.DeleteUser(r.Context(), c.CustomerID(), id); err != nil {
		return err
	}
	return noContent(w)
}

// unmarshalField decodes a nested raw object, naming it in errors.
func unmarshalField(name string, raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return wnms.JSONError(err, name)
	}
	return nil
}

// checkText checks a text field's length in characters and that it holds
// no control characters.
func checkText(field, v string, min, max int) error {
	if !utf8.ValidString(v) {
		return wnms.Invalid(field, "must be valid UTF-8")
	}
	n := utf8.RuneCountInString(v)
	if n < min {
		if min == 1 {
			return wnms.Invalid(field, "required")
		}
		return wnms.Invalid(field, "must be at least %d characters", min)
	}
	if n > max {
		return wnms.Invalid(field, "must be at most %d characters", max)
	}
	if strings.IndexFunc(v, unicode.IsControl) >= 0 {
		return wnms.Invalid(field, "must not contain control characters")
	}
	return nil
}

func validEmail(s string) bool {
	if len(s) > 254 || strings.ContainsAny(s, " \t\r\n<>") {
		return false
	}
	local, domain, ok := strings.Cut(s, "@")
	return ok && local != "" && domain != "" && !strings.Contains(domain, "@") &&
		strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}
