package wnms

import (
	"encoding/json"
	"strings"
	"sync"
	"time"
)

// Role is a user's role. The zero value is not a role.
type Role string

// The roles, lowest to highest (decisions.md §4).
const (
	Viewer        Role = "VIEWER"
	Operator      Role = "OPERATOR"
	PowerUser     Role = "POWERUSER"
	Administrator Role = "ADMINISTRATOR"
	SuperUser     Role = "SUPERUSER"
)

// Rank is the role's userRoleId: VIEWER 1 … SUPERUSER 5; 0 for an unknown role.
func (r Role) Rank() int {
	switch r {
	case Viewer:
		return 1
	case Operator:
		return 2
	case PowerUser:
		return 3
	case Administrator:
		return 4
	case SuperUser:
		return 5
	}
	return 0
}

// Valid reports whether r is one of the five roles.
func (r Role) Valid() bool { return r.Rank() > 0 }

// Access is the role class used by per-call role rules: POWERUSER has
// OPERATOR's rights.
func (r Role) Access() Role {
	if r == PowerUser {
		return Operator
	}
	return r
}

// ParseRole reads a role name case-insensitively.
func ParseRole(s string) (Role, bool) {
	r := Role(strings.ToUpper(strings.TrimSpace(s)))
	return r, r.Valid()
}

// User types.
const (
	UserTypeLocal  = "LOCAL"
	UserTypeLDAP   = "LDAP"
	UserTypeRADIUS = "RADIUS"
	UserTypeAPI    = "API"
)

// Lock states of a user.
const (
	NotLocked          = "NOT_LOCKED"
	UserLocked         = "USER_LOCKED"
	UserLockedCustomer = "USER_LOCKED_CUSTOMER"
)

// OnPremCustomer is the implicit customer of an on-premises server.
const OnPremCustomer int64 = 1

// PasswdSettings is a user's password expiry policy.
type PasswdSettings struct {
	PasswordExpires            bool  `json:"passwordExpires"`
	PasswordExpiryDateTime     int64 `json:"passwordExpiryDateTime"`
	PasswordExpiryDaysInterval int64 `json:"passwordExpiryDaysInterval"`
	PasswordExpiryWarningDays  int   `json:"passwordExpiryWarningDays"`
}

// UserLanguage describes the user's language; only English (id 0) exists.
type UserLanguage struct {
	LangID          int    `json:"langId"`
	LangCode        string `json:"langCode"`
	Name            string `json:"name"`
	SystemLanguage  bool   `json:"systemLanguage"`
	Supported       bool   `json:"supported"`
	DefaultLanguage bool   `json:"defaultLanguage"`
	CountryCode     string `json:"countryCode"`
}

// English is the one supported language.
var English = UserLanguage{LangID: 0, LangCode: "en", Name: "English", SystemLanguage: true,
	Supported: true, DefaultLanguage: true, CountryCode: "US"}

// UserDefinedField is the value of a custom user field on a user.
type UserDefinedField struct {
	ID    int64  `json:"id"`
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CustomField is a custom user field definition.
type CustomField struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// User is a user account. Secrets never live on this type.
type User struct {
	UserID                 int64              `json:"userId"`
	LangID                 int                `json:"langId"`
	CustomerID             int64              `json:"customerId"`
	DefaultPassword        bool               `json:"defaultPassword"`
	LoginID                string             `json:"loginId"`
	FirstName              string             `json:"firstName"`
	LastName               string             `json:"lastName"`
	Email                  string             `json:"email"`
	Role                   Role               `json:"role"`
	TimeZone               string             `json:"timeZone"`
	TimeZoneOffsetInMins   int                `json:"timeZonOffSetInMins"`
	FontPref               string             `json:"fontPref"`
	PasswdSettings         PasswdSettings     `json:"passwdSettings"`
	LogoutInterval         int                `json:"logoutInterval"`
	AllowedLocations       []LocationID       `json:"allowedLocations"`
	UserLockedState        string             `json:"userLockedState"`
	UserType               string             `json:"userType"`
	AllowAccessMgmt        bool               `json:"allowAccessMgmt"`
	AllowSecurityMgmt      bool               `json:"allowSecurityMgmt"`
	TemporaryLockDateTime  int64              `json:"temporaryLockDateTime"`
	ServiceOrSupportUser   bool               `json:"serviceOrSupportUser"`
	UserLanguage           UserLanguage       `json:"userLanguage"`
	PasswordChangeEnforced bool               `json:"passwordChangeEnforced"`
	UserDefinedFields      []UserDefinedField `json:"userDefinedFields"`

	// Stored state behind the derived fields above.
	ManualLock     bool  `json:"-"`
	LockedUntil    int64 `json:"-"` // ms; 0 = no temporary lock
	FailedLogins   int   `json:"-"`
	CustomerLocked bool  `json:"-"`
	PasswordSetAt  int64 `json:"-"`
}

// userJSON adds the sample spelling of the offset field to the output.
type userJSON struct {
	*userAlias
	TimezonOffSetInMins int `json:"timezonOffSetInMins"`
}

type userAlias User

// MarshalJSON writes the user with both spellings of the time zone offset,
// as the field table and the samples disagree and clients read either.
func (u User) MarshalJSON() ([]byte, error) {
	a := userAlias(u)
	return json.Marshal(userJSON{userAlias: &a, TimezonOffSetInMins: u.TimeZoneOffsetInMins})
}

// Derive fills the fields computed from stored state at time now: lock
// state, the time zone offset, and the language.
func (u *User) Derive(now time.Time) {
	ms := now.UnixMilli()
	switch {
	case u.CustomerLocked:
		u.UserLockedState = UserLockedCustomer
	case u.ManualLock:
		u.UserLockedState = UserLocked
	case u.LockedUntil > ms:
		u.UserLockedState = UserLocked
	default:
		u.UserLockedState = NotLocked
	}
	if u.LockedUntil > ms {
		u.TemporaryLockDateTime = u.LockedUntil
	} else {
		u.TemporaryLockDateTime = 0
	}
	if u.TimeZone != "" {
		if loc, err := LoadLocation(u.TimeZone); err == nil {
			_, off := now.In(loc).Zone()
			u.TimeZoneOffsetInMins = off / 60
		}
	}
	u.LangID = 0
	u.UserLanguage = English
	if u.AllowedLocations == nil {
		u.AllowedLocations = []LocationID{}
	}
}

// Locked reports whether the user may not log in at time now.
func (u *User) Locked(now time.Time) bool {
	return u.CustomerLocked || u.ManualLock || u.LockedUntil > now.UnixMilli()
}

// PasswordExpired reports whether a LOCAL user's password has expired.
func (u *User) PasswordExpired(now time.Time) bool {
	return u.UserType == UserTypeLocal && u.PasswdSettings.PasswordExpires &&
		u.PasswdSettings.PasswordExpiryDateTime > 0 && now.UnixMilli() >= u.PasswdSettings.PasswordExpiryDateTime
}

var zones sync.Map // name -> *time.Location

// LoadLocation is time.LoadLocation with the loaded zones kept: loading
// parses the embedded zone data each time, which costs microseconds a call.
func LoadLocation(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	zones.Store(name, l)
	return l, nil
}

// Features available to every role (decisions.md §6).
var allFeatures = []string{"REPORTS_CREATION", "SENSOR_PLACEMENT", "SHARED_REPORTS", "SWARM_DISABLED",
	"WIFI", "MANAGELOGS", "AP_PLACEMENT", "SHOW_UPGRADE_FOR_SENSOR", "SENSOR_IMPORT",
	"PERFORMANCE_MONITORING", "ACCOUNT_LOCKING", "IN_BROWSER_MESSAGING", "HA"}

var viewerDenied = map[string]bool{"REPORTS_CREATION": true, "SENSOR_PLACEMENT": true,
	"AP_PLACEMENT": true, "SENSOR_IMPORT": true, "MANAGELOGS": true}

// Features lists the system features available to a role.
func Features(r Role) []string {
	out := make([]string, 0, len(allFeatures))
	for _, f := range allFeatures {
		if r == Viewer && viewerDenied[f] {
			continue
		}
		out = append(out, f)
	}
	return out
}
