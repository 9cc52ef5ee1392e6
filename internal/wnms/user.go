package wnms

import (
	"encoding/json"
	"strings"
	"time"
	"unicode"
)

// Role is a user's role. The zero value is not a role.
type Role string

// The roles, lowest to highest (api.md §4).
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

// Features available to every role (api.md §6).
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

// NewUser is a user of the customer with the defaults of a create: LOCAL,
// English, no automatic logout, both management rights.
func NewUser(customerID int64) User {
	return User{CustomerID: customerID, UserType: UserTypeLocal, FontPref: "ENGLISH_ONLY",
		LogoutInterval: -1, AllowAccessMgmt: true, AllowSecurityMgmt: true}
}

// ParseNewUser reads the "user" object of a create over NewUser's
// defaults. What the server decides is not the client's: the id, the
// customer and the lock state are reset.
func ParseNewUser(raw json.RawMessage, customerID int64) (*User, error) {
	u := NewUser(customerID)
	if err := decodeUserObject(raw, &u); err != nil {
		return nil, err
	}
	u.UserID, u.CustomerID = 0, customerID
	u.ManualLock, u.LockedUntil = false, 0
	if u.UserType == "" {
		u.UserType = UserTypeLocal
	}
	return &u, nil
}

// UserEdit is the "user" object of a modify: which user it names (userId,
// or loginId) and the fields it changes; fields it does not send stay.
type UserEdit struct {
	raw         json.RawMessage
	UserID      *int64  `json:"userId"`
	LoginID     *string `json:"loginId"`
	LockedState *string `json:"userLockedState"`
	UserType    *string `json:"userType"`
}

// ParseUserEdit reads the "user" object of a modify.
func ParseUserEdit(raw json.RawMessage) (*UserEdit, error) {
	e := &UserEdit{raw: raw}
	if err := decodeUserObject(raw, e); err != nil {
		return nil, err
	}
	return e, nil
}

// ChangesLock reports whether the edit changes old's lock state, and to
// locked or not.
func (e *UserEdit) ChangesLock(old *User) (changes, lock bool) {
	if e.LockedState == nil || *e.LockedState == old.UserLockedState {
		return false, false
	}
	return true, *e.LockedState == UserLocked
}

// Apply returns old with the edit's fields. The id, customer and user type
// never change (a different userType is VALIDATION_FAILED); the lock state
// changes only to NOT_LOCKED (which also ends a temporary lock) or
// USER_LOCKED.
func (e *UserEdit) Apply(old *User) (*User, error) {
	u := *old
	u.AllowedLocations = append([]LocationID(nil), old.AllowedLocations...)
	u.UserDefinedFields = append([]UserDefinedField(nil), old.UserDefinedFields...)
	if old.UserDefinedFields == nil {
		u.UserDefinedFields = nil
	}
	if err := decodeUserObject(e.raw, &u); err != nil {
		return nil, err
	}
	u.UserID, u.CustomerID = old.UserID, old.CustomerID
	if e.UserType != nil && *e.UserType != old.UserType {
		return nil, Invalid("userType", "cannot change from %s to %s", old.UserType, *e.UserType)
	}
	u.UserType = old.UserType
	if changes, _ := e.ChangesLock(old); changes {
		switch *e.LockedState {
		case NotLocked:
			u.ManualLock, u.LockedUntil = false, 0
		case UserLocked:
			u.ManualLock = true
		default:
			return nil, Invalid("userLockedState", "must be %s or %s", NotLocked, UserLocked)
		}
	}
	return &u, nil
}

func decodeUserObject(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return JSONError(err, "user")
	}
	return nil
}

// Limits of a user's fields.
const (
	MaxLoginID           = 64
	MaxUserName          = 64
	MaxUserLocations     = 1000
	MaxCustomFieldName   = 64
	MaxCustomFieldValue  = 256
	MaxPasswordDays      = 3650
	MaxPasswordWarnDays  = 365
	MaxLogoutMinutes     = 10080
	MinTimeZoneOffsetMin = -720
	MaxTimeZoneOffsetMin = 840
)

// Validate checks every field of a user about to be stored and puts it in
// its stored form: the login id trimmed, the font preference defaulted,
// allowed locations typed and without repeats, and custom field values
// matched to the customer's definitions (fields), by name
// (case-insensitively) or, when no name is sent, by id. Whether the
// locations exist and whether the caller may grant the role and the
// locations is access control's to say, not the user's.
func (u *User) Validate(fields []CustomField) error {
	u.LoginID = strings.TrimSpace(u.LoginID)
	if err := CheckText("loginId", u.LoginID, 1, MaxLoginID); err != nil {
		return err
	}
	if strings.IndexFunc(u.LoginID, unicode.IsSpace) >= 0 {
		return Invalid("loginId", "must not contain spaces")
	}
	for _, f := range []struct{ name, v string }{{"firstName", u.FirstName}, {"lastName", u.LastName}} {
		if err := CheckText(f.name, f.v, 0, MaxUserName); err != nil {
			return err
		}
	}
	if u.Email != "" && !validEmail(u.Email) {
		return Invalid("email", "not an email address")
	}
	if !u.Role.Valid() {
		return Invalid("role", "must be VIEWER, OPERATOR, POWERUSER, ADMINISTRATOR or SUPERUSER")
	}
	switch u.UserType {
	case UserTypeLocal, UserTypeLDAP, UserTypeRADIUS, UserTypeAPI:
	default:
		return Invalid("userType", "must be LOCAL, LDAP, RADIUS or API")
	}
	if u.TimeZone != "" {
		if err := CheckTimeZone("timeZone", u.TimeZone); err != nil {
			return err
		}
	}
	if u.TimeZoneOffsetInMins < MinTimeZoneOffsetMin || u.TimeZoneOffsetInMins > MaxTimeZoneOffsetMin {
		return Invalid("timeZonOffSetInMins", "must be %d to %d", MinTimeZoneOffsetMin, MaxTimeZoneOffsetMin)
	}
	switch u.FontPref {
	case "":
		u.FontPref = "ENGLISH_ONLY"
	case "ENGLISH_ONLY", "MULTILINGUAL":
	default:
		return Invalid("fontPref", "must be ENGLISH_ONLY or MULTILINGUAL")
	}
	if u.LangID != 0 {
		return Invalid("langId", "only ENGLISH (0) is supported")
	}
	if u.LogoutInterval != -1 && (u.LogoutInterval < 1 || u.LogoutInterval > MaxLogoutMinutes) {
		return Invalid("logoutInterval", "must be -1 or 1 to %d minutes", MaxLogoutMinutes)
	}
	if err := u.PasswdSettings.validate(); err != nil {
		return err
	}
	if err := u.normalizeLocations(); err != nil {
		return err
	}
	return u.resolveFields(fields)
}

func (ps PasswdSettings) validate() error {
	if ps.PasswordExpires {
		if ps.PasswordExpiryDateTime <= 0 {
			return Invalid("passwdSettings.passwordExpiryDateTime", "required when passwordExpires is true")
		}
		if ps.PasswordExpiryDaysInterval <= 0 || ps.PasswordExpiryDaysInterval > MaxPasswordDays {
			return Invalid("passwdSettings.passwordExpiryDaysInterval", "must be 1 to %d when passwordExpires is true", MaxPasswordDays)
		}
	}
	if ps.PasswordExpiryDateTime < 0 || ps.PasswordExpiryDaysInterval < 0 {
		return Invalid("passwdSettings", "times and intervals must not be negative")
	}
	if ps.PasswordExpiryWarningDays < 0 || ps.PasswordExpiryWarningDays > MaxPasswordWarnDays {
		return Invalid("passwdSettings.passwordExpiryWarningDays", "must be 0 to %d", MaxPasswordWarnDays)
	}
	return nil
}

// normalizeLocations types the allowed locations (a local location id of
// this server) and drops repeats; at least one is required.
func (u *User) normalizeLocations() error {
	if len(u.AllowedLocations) == 0 {
		return Invalid("allowedLocations", "at least one location is required")
	}
	if len(u.AllowedLocations) > MaxUserLocations {
		return Invalid("allowedLocations", "at most %d locations", MaxUserLocations)
	}
	seen := make(map[int64]bool, len(u.AllowedLocations))
	locs := make([]LocationID, 0, len(u.AllowedLocations))
	for _, l := range u.AllowedLocations {
		if l.Type == "" {
			l.Type = LocalLocationID
		}
		if l.Type != LocalLocationID {
			return Invalid("allowedLocations", "type must be %s", LocalLocationID)
		}
		l.ChildID = nil
		if !seen[l.ID] {
			seen[l.ID] = true
			locs = append(locs, l)
		}
	}
	u.AllowedLocations = locs
	return nil
}

// resolveFields matches the user's custom field values to the customer's
// definitions.
func (u *User) resolveFields(defs []CustomField) error {
	if len(u.UserDefinedFields) == 0 {
		return nil
	}
	byName := make(map[string]CustomField, len(defs))
	byID := make(map[int64]CustomField, len(defs))
	for _, d := range defs {
		byName[strings.ToLower(d.Name)] = d
		byID[d.ID] = d
	}
	seen := map[int64]bool{}
	for i, f := range u.UserDefinedFields {
		d, ok := byName[strings.ToLower(f.Name)]
		if !ok && f.Name == "" {
			d, ok = byID[f.ID]
		}
		if !ok {
			return Invalid("userDefinedFields", "no custom field %q", f.Name)
		}
		if seen[d.ID] {
			return Invalid("userDefinedFields", "field %q given twice", d.Name)
		}
		seen[d.ID] = true
		if err := CheckText("userDefinedFields."+d.Name, f.Value, 0, MaxCustomFieldValue); err != nil {
			return err
		}
		u.UserDefinedFields[i] = UserDefinedField{ID: d.ID, Name: d.Name, Value: f.Value}
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
