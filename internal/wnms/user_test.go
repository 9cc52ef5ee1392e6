package wnms_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

func errCode(err error) string {
	if err == nil {
		return ""
	}
	return wnms.ErrorCode(err)
}

func TestUserValidate(t *testing.T) {
	fields := []wnms.CustomField{{ID: 3, Name: "Department"}}
	for _, tc := range []struct {
		name  string
		edit  func(u *wnms.User)
		want  string // error code
		field string // moreInfo of the error
	}{
		{"a plain user", func(*wnms.User) {}, "", ""},
		{"login trimmed", func(u *wnms.User) { u.LoginID = "  ada  " }, "", ""},
		{"login missing", func(u *wnms.User) { u.LoginID = " " }, wnms.ValidationFailed, "loginId"},
		{"login with a space", func(u *wnms.User) { u.LoginID = "a da" }, wnms.ValidationFailed, "loginId"},
		{"login too long", func(u *wnms.User) { u.LoginID = strings.Repeat("é", 65) }, wnms.ValidationFailed, "loginId"},
		{"control character in a name", func(u *wnms.User) { u.FirstName = "A\x07" }, wnms.ValidationFailed, "firstName"},
		{"bad email", func(u *wnms.User) { u.Email = "ada@localhost" }, wnms.ValidationFailed, "email"},
		{"unknown role", func(u *wnms.User) { u.Role = "ROOT" }, wnms.ValidationFailed, "role"},
		{"unknown type", func(u *wnms.User) { u.UserType = "SAML" }, wnms.ValidationFailed, "userType"},
		{"unknown zone", func(u *wnms.User) { u.TimeZone = "Mars/Olympus" }, wnms.ValidationFailed, "timeZone"},
		{"host zone", func(u *wnms.User) { u.TimeZone = "Local" }, wnms.ValidationFailed, "timeZone"},
		{"offset beyond +14h", func(u *wnms.User) { u.TimeZoneOffsetInMins = 841 }, wnms.ValidationFailed, "timeZonOffSetInMins"},
		{"font", func(u *wnms.User) { u.FontPref = "COMIC" }, wnms.ValidationFailed, "fontPref"},
		{"language", func(u *wnms.User) { u.LangID = 2 }, wnms.ValidationFailed, "langId"},
		{"logout 0", func(u *wnms.User) { u.LogoutInterval = 0 }, wnms.ValidationFailed, "logoutInterval"},
		{"expiry without a date", func(u *wnms.User) {
			u.PasswdSettings = wnms.PasswdSettings{PasswordExpires: true, PasswordExpiryDaysInterval: 30}
		}, wnms.ValidationFailed, "passwdSettings.passwordExpiryDateTime"},
		{"no locations", func(u *wnms.User) { u.AllowedLocations = nil }, wnms.ValidationFailed, "allowedLocations"},
		{"remote location", func(u *wnms.User) {
			u.AllowedLocations = []wnms.LocationID{{Type: wnms.RemoteLocationID, ID: 3}}
		}, wnms.ValidationFailed, "allowedLocations"},
		{"unknown custom field", func(u *wnms.User) {
			u.UserDefinedFields = []wnms.UserDefinedField{{Name: "Floor", Value: "2"}}
		}, wnms.ValidationFailed, "userDefinedFields"},
		{"custom field twice", func(u *wnms.User) {
			u.UserDefinedFields = []wnms.UserDefinedField{{Name: "department", Value: "a"}, {ID: 3, Value: "b"}}
		}, wnms.ValidationFailed, "userDefinedFields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := wnms.NewUser(1)
			u.LoginID, u.Role = "ada", wnms.Viewer
			u.AllowedLocations = []wnms.LocationID{{ID: 5}, wnms.LocalID(5), wnms.LocalID(7)}
			tc.edit(&u)
			err := u.Validate(fields)
			if got := errCode(err); got != tc.want {
				t.Fatalf("Validate = %v, want code %q", err, tc.want)
			}
			if err != nil {
				if e := err.(*wnms.Error); e.MoreInfo != tc.field {
					t.Errorf("error names %q, want %q", e.MoreInfo, tc.field)
				}
				return
			}
			if u.LoginID != "ada" {
				t.Errorf("loginId %q not trimmed", u.LoginID)
			}
			if len(u.AllowedLocations) != 2 || u.AllowedLocations[0] != wnms.LocalID(5) {
				t.Errorf("locations not typed and deduplicated: %v", u.AllowedLocations)
			}
		})
	}
}

func TestUserEdit(t *testing.T) {
	old := wnms.NewUser(1)
	old.UserID, old.LoginID, old.Role, old.FirstName = 9, "ada", wnms.Viewer, "Ada"
	old.AllowedLocations = []wnms.LocationID{wnms.LocalID(0)}
	old.UserLockedState = wnms.NotLocked
	for _, tc := range []struct {
		name       string
		raw        string
		want       string
		check      func(t *testing.T, u *wnms.User)
		changes    bool
		lock       bool
		parseError bool
	}{
		{name: "one field changes, the rest stay", raw: `{"userId":9,"lastName":"Lovelace"}`, check: func(t *testing.T, u *wnms.User) {
			if u.FirstName != "Ada" || u.LastName != "Lovelace" || u.UserID != 9 || u.CustomerID != 1 {
				t.Errorf("got %+v", u)
			}
		}},
		{name: "id and customer are the server's", raw: `{"userId":9,"customerId":7}`, check: func(t *testing.T, u *wnms.User) {
			if u.CustomerID != 1 {
				t.Errorf("customer changed to %d", u.CustomerID)
			}
		}},
		{name: "user type is fixed", raw: `{"userId":9,"userType":"API"}`, want: wnms.ValidationFailed},
		{name: "lock", raw: `{"userId":9,"userLockedState":"USER_LOCKED"}`, changes: true, lock: true,
			check: func(t *testing.T, u *wnms.User) {
				if !u.ManualLock {
					t.Error("not locked")
				}
			}},
		{name: "an unknown lock state", raw: `{"userId":9,"userLockedState":"MAYBE"}`, changes: true, want: wnms.ValidationFailed},
		{name: "a field of the wrong type", raw: `{"userId":"nine"}`, parseError: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := wnms.ParseUserEdit(json.RawMessage(tc.raw))
			if tc.parseError {
				if err == nil {
					t.Fatal("parsed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changes, lock := e.ChangesLock(&old); changes != tc.changes || lock != tc.lock {
				t.Errorf("ChangesLock = %v %v, want %v %v", changes, lock, tc.changes, tc.lock)
			}
			u, err := e.Apply(&old)
			if got := errCode(err); got != tc.want {
				t.Fatalf("Apply = %v, want %q", err, tc.want)
			}
			if tc.check != nil {
				tc.check(t, u)
			}
			if old.LastName != "" || old.ManualLock {
				t.Error("Apply changed the old user")
			}
		})
	}
}

func TestAtField(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		wantMsg   string
		wantField string
	}{
		{"a store rule gets the field", wnms.RuleBroken("no location %d", 7), "parentId: no location 7", "parentId"},
		{"a named field stays", wnms.Invalid("name", "required"), "name: required", "name"},
		{"another code stays", wnms.NotFound("no location 7"), "no location 7", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := wnms.AtField(tc.err, "parentId").(*wnms.Error)
			if e.Message != tc.wantMsg || e.MoreInfo != tc.wantField {
				t.Errorf("got %q (%q), want %q (%q)", e.Message, e.MoreInfo, tc.wantMsg, tc.wantField)
			}
		})
	}
	if wnms.AtField(nil, "x") != nil {
		t.Error("AtField(nil) is not nil")
	}
}
