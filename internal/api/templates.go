package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// Client connection test profiles (docs/api.md §7 and §10).
//
// Scope: a profile created at location L is visible at L and below. A
// caller reads a profile when it is visible somewhere in the caller's
// locations (created at or above one of them, or below one); it edits,
// copies from elsewhere or deletes one only when it sees the location the
// profile was created at. Another customer's profile is 404; a locationid
// outside the caller's locations (or of another customer) is 403
// LOCATION_ACCESS_DENIED.

// profileMaxPageSize is the largest pageSize of the paged list (api.md §14).
const profileMaxPageSize = 1000

// profileFields are the names the fields parameter may select.
var profileFields = newFieldSet(jsonFieldNames(wnms.Template{}))

// profileMinimal are the fields of the list call's minimal information.
var profileMinimal = []string{"templateId", "templateName", "createdAtLocationId", "description", "templateType"}

// profilePage is the paged list wrapper.
type profilePage struct {
	TemplateList []wnms.Template `json:"templateList"`
	PreviousLink *string         `json:"previousLink"`
	NextLink     *string         `json:"nextLink"`
	TotalCount   int             `json:"totalCount"`
}

// listProfiles is GET /templates/CL_CONN_TEST_PROFILE: the profiles created
// at and above the location (and below it with fetchSubTreeTemplates).
func (s *Server) listProfiles(w http.ResponseWriter, r *http.Request) error {
	if _, given := httpkit.QueryValue(r, "minimalinforequired"); !given {
		return wnms.MissingParam("minimalinforequired")
	}
	minimal, err := httpkit.QueryBool(r, "minimalinforequired", false)
	if err != nil {
		return err
	}
	fields, err := parseFields(r, profileFields)
	if err != nil {
		return err
	}
	if fields == nil && minimal {
		fields = profileMinimal
	}
	f, err := s.profileFilter(r)
	if err != nil {
		return err
	}
	items, _, err := s.Store.Templates(r.Context(), f)
	if err != nil {
		return err
	}
	out, err := selectEach(maskProfiles(items), fields)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// pageProfiles is GET /templates/CL_CONN_TEST_PROFILE/{startIndex}/{pageSize}.
func (s *Server) pageProfiles(w http.ResponseWriter, r *http.Request) error {
	start, err := httpkit.PathInt(r, "startIndex")
	if err != nil {
		return err
	}
	if start < 0 {
		return wnms.ParamError("startIndex", "startIndex must be 0 or more, not %d", start)
	}
	size, err := httpkit.PathInt(r, "pageSize")
	if err != nil {
		return err
	}
	if size < 1 {
		return wnms.ParamError("pageSize", "pageSize must be 1 or more, not %d", size)
	}
	if size > profileMaxPageSize {
		return &wnms.Error{Code: wnms.PageSizeExceeded, MoreInfo: "pageSize",
			Message: "pageSize must be at most " + strconv.Itoa(profileMaxPageSize) + ", not " + strconv.FormatInt(size, 10)}
	}
	f, err := s.profileFilter(r)
	if err != nil {
		return err
	}
	f.Offset, f.Limit = int(start), int(size)
	items, total, err := s.Store.Templates(r.Context(), f)
	if err != nil {
		return err
	}
	page := profilePage{TemplateList: maskProfiles(items), TotalCount: total}
	link := func(from int64) *string {
		l := "/" + wnms.ProfileTemplateType + "/" + strconv.FormatInt(from, 10) + "/" + strconv.FormatInt(size, 10)
		if r.URL.RawQuery != "" {
			l += "?" + r.URL.RawQuery
		}
		return &l
	}
	if start > 0 {
		page.PreviousLink = link(max(0, start-size))
	}
	if start < int64(total)-size {
		page.NextLink = link(start + size)
	}
	httpkit.WriteJSON(w, http.StatusOK, page)
	return nil
}

// getProfile is GET /templates/{templateId}/CL_CONN_TEST_PROFILE.
func (s *Server) getProfile(w http.ResponseWriter, r *http.Request) error {
	fields, err := parseFields(r, profileFields)
	if err != nil {
		return err
	}
	t, err := s.readableProfile(r)
	if err != nil {
		return err
	}
	m := t.Masked()
	out, err := selectFields(&m, fields)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, out)
	return nil
}

// createProfile is PUT /templates?locationid=: a new profile created at the
// location.
func (s *Server) createProfile(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	l, err := s.locationParam(r, -2)
	if err != nil {
		return err
	}
	var in wnms.TemplateInput
	if err := httpkit.DecodeJSON(w, r, &in, httpkit.MaxJSONBody); err != nil {
		return err
	}
	if err := in.Require("type", "templateName", "ssid", "frequencyBand"); err != nil {
		return err
	}
	if id := in.CreatedAtLocationID; id != nil {
		if err := checkProfileLocation(id, l.ID.ID); err != nil {
			return err
		}
	}
	t := wnms.NewTemplate()
	if err := in.ApplyTo(&t); err != nil {
		return err
	}
	if err := t.Validate(); err != nil {
		return err
	}
	t.CustomerID, t.CreatedAtLocationID = c.CustomerID(), wnms.LocalID(l.ID.ID)
	if err := s.Store.CreateTemplate(r.Context(), &t); err != nil {
		return wnms.AtField(err, "createdAtLocationId")
	}
	return s.writeProfile(w, r, t.TemplateID)
}

// checkProfileLocation checks a createdAtLocationId a body sends against
// the location the profile is (or is being) created at.
func checkProfileLocation(id *wnms.LocationID, want int64) error {
	if (id.Type != "" && !strings.EqualFold(id.Type, wnms.LocalLocationID)) || id.ChildID != nil {
		return wnms.Invalid("createdAtLocationId", "must be a %s of this server", wnms.LocalLocationID)
	}
	if id.ID != want {
		return wnms.Invalid("createdAtLocationId", "the profile is created at location %d, not %d (the location is fixed at creation)", want, id.ID)
	}
	return nil
}

// copyProfile is PUT /templates/copy/{templateId}/CL_CONN_TEST_PROFILE with
// the destination's Location ID JSON: an independent profile at the
// destination with a new id, named with " (copy)" if needed to stay unique
// there. The copy is a profile of this server: mncTemplateId and
// mnctemplate start afresh.
func (s *Server) copyProfile(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	src, err := s.readableProfile(r)
	if err != nil {
		return err
	}
	var dest struct {
		Type    *string `json:"type"`
		ID      *int64  `json:"id"`
		ChildID *int64  `json:"childId"`
	}
	if err := httpkit.DecodeJSON(w, r, &dest, httpkit.MaxJSONBody); err != nil {
		return err
	}
	if dest.ID == nil {
		return wnms.Invalid("id", "the destination location id is required")
	}
	if dest.Type != nil && !strings.EqualFold(*dest.Type, wnms.LocalLocationID) {
		if strings.EqualFold(*dest.Type, wnms.RemoteLocationID) {
			return wnms.Invalid("type", "a copy goes to a location of this server; to copy on a cluster child, make the call with its nodeid")
		}
		return profileBadField("type", "must be %s, not %q", wnms.LocalLocationID, *dest.Type)
	}
	if dest.ChildID != nil && *dest.ChildID != 0 {
		return wnms.Invalid("childId", "this server has no cluster child %d", *dest.ChildID)
	}
	l, err := s.locationFor(r.Context(), c, *dest.ID)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return wnms.Invalid("id", "no location %d", *dest.ID)
	}
	if err != nil {
		return err
	}
	t := *src
	t.TemplateID, t.CreatedAtLocationID = 0, wnms.LocalID(l.ID.ID)
	t.MncTemplateID, t.MncTemplate = 0, false
	t.PingDestinationServers = append([]string{}, src.PingDestinationServers...)
	if err := s.Store.CopyTemplate(r.Context(), &t); err != nil {
		return wnms.AtField(err, "id")
	}
	return s.writeProfile(w, r, t.TemplateID)
}

// editProfile is POST /templates: the profile named by templateId gets the
// fields the body sends; the rest stay. Its location is fixed at creation.
func (s *Server) editProfile(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	var in wnms.TemplateInput
	if err := httpkit.DecodeJSON(w, r, &in, httpkit.MaxJSONBody); err != nil {
		return err
	}
	if err := in.Require("templateId"); err != nil {
		return err
	}
	t, err := s.Store.EditTemplate(r.Context(), c.CustomerID(), *in.TemplateID, func(old *wnms.Template) (*wnms.Template, error) {
		if _, err := s.profileWriter(r.Context(), c, old); err != nil {
			return nil, err
		}
		if err := in.Require("type", "templateName", "createdAtLocationId", "ssid", "frequencyBand"); err != nil {
			return nil, err
		}
		if err := checkProfileLocation(in.CreatedAtLocationID, old.CreatedAtLocationID.ID); err != nil {
			return nil, err
		}
		t := *old
		if err := in.ApplyTo(&t); err != nil {
			return nil, err
		}
		return &t, t.Validate()
	})
	if err != nil {
		return err
	}
	return s.writeProfile(w, r, t.TemplateID)
}

// deleteProfile is DELETE /templates/{templateId}/CL_CONN_TEST_PROFILE.
func (s *Server) deleteProfile(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	t, err := s.readableProfile(r)
	if err != nil {
		return err
	}
	if _, err := s.profileWriter(r.Context(), c, t); err != nil {
		return err
	}
	if err := s.Store.DeleteTemplate(r.Context(), c.CustomerID(), t.TemplateID); err != nil {
		return err
	}
	return noContent(w)
}

// writeProfile answers 200 with the stored profile, masked.
func (s *Server) writeProfile(w http.ResponseWriter, r *http.Request, id int64) error {
	t, err := s.Store.Template(r.Context(), wnms.CallerFrom(r.Context()).CustomerID(), id)
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, t.Masked())
	return nil
}

func maskProfiles(items []wnms.Template) []wnms.Template {
	out := make([]wnms.Template, len(items))
	for i := range items {
		out[i] = items[i].Masked()
	}
	return out
}

// profileBadField is an INVALID_REQUEST_BODY error naming a field: an unknown enum
// value.
func profileBadField(field, format string, args ...any) error {
	e := wnms.Invalid(field, format, args...)
	e.Code = wnms.InvalidRequestBody
	return e
}

// readableProfile reads the profile of the templateId path parameter for
// the caller: 404 when it is not a profile of the caller's customer. With
// a locationid, that location must be the caller's (403) and the profile
// visible there or created below it (404 otherwise); without one, the
// profile must be visible somewhere in the caller's locations (403).
func (s *Server) readableProfile(r *http.Request) (*wnms.Template, error) {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	id, err := httpkit.PathInt(r, "templateId")
	if err != nil {
		return nil, err
	}
	t, err := s.Store.Template(ctx, c.CustomerID(), id)
	if err != nil {
		return nil, err
	}
	if _, given := httpkit.QueryValue(r, "locationid"); given {
		l, err := s.locationParam(r, wnms.RootLocation)
		if err != nil {
			return nil, err
		}
		if !wnms.Under(l.Path, t.LocationPath) && !wnms.Under(t.LocationPath, l.Path) {
			return nil, wnms.NotFound("no template %d at location %d", id, l.ID.ID)
		}
		return t, nil
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return nil, err
	}
	if !profileVisibleIn(t.LocationPath, scope) {
		return nil, wnms.Errorf(wnms.LocationAccessDenied, "template %d belongs to a location outside your locations", id)
	}
	return t, nil
}

// profileWriter checks that the caller may change the profile: it must
// see the location the profile was created at (403 otherwise).
func (s *Server) profileWriter(ctx context.Context, c *wnms.Caller, t *wnms.Template) (*wnms.Location, error) {
	l, err := s.locationFor(ctx, c, t.CreatedAtLocationID.ID)
	if wnms.ErrorCode(err) == wnms.LocationAccessDenied {
		return nil, wnms.Errorf(wnms.LocationAccessDenied, "template %d belongs to location %d, outside your locations",
			t.TemplateID, t.CreatedAtLocationID.ID)
	}
	return l, err
}

// profileVisibleIn reports whether a profile created at path is visible somewhere
// in the scope: created at or above one of its paths, or below one.
func profileVisibleIn(path string, scope []string) bool {
	for _, p := range scope {
		if wnms.Under(p, path) || wnms.Under(path, p) {
			return true
		}
	}
	return false
}

// profileFilter builds the selection of the list calls from locationid
// (root when absent) and fetchSubTreeTemplates: the profiles created at the
// location or above it, plus those below it with the flag, of the caller's
// customer. A locationid is checked (403 outside the caller's locations);
// without one, the selection is cut silently to what the caller's
// locations see.
func (s *Server) profileFilter(r *http.Request) (wnms.TemplateFilter, error) {
	ctx := r.Context()
	c := wnms.CallerFrom(ctx)
	f := wnms.TemplateFilter{CustomerID: c.CustomerID()}
	subtree, err := httpkit.QueryBool(r, "fetchSubTreeTemplates", false)
	if err != nil {
		return f, err
	}
	var l *wnms.Location
	if _, given := httpkit.QueryValue(r, "locationid"); given {
		if l, err = s.locationParam(r, wnms.RootLocation); err != nil {
			return f, err
		}
	} else if l, err = s.Store.Location(ctx, wnms.RootLocation); err != nil {
		return f, err
	}
	scope, err := c.ScopePaths(ctx)
	if err != nil {
		return f, err
	}
	f.LocationIDs, f.Subtrees = profileSelection(l.Path, subtree, scope)
	return f, nil
}

// profileSelection is the pure part of profileFilter: for the location at
// path, the ids of the locations whose profiles to list and the subtrees
// whose profiles to list, cut to what scope sees.
func profileSelection(path string, subtree bool, scope []string) (ids []int64, subtrees []string) {
	seen := map[int64]bool{}
	add := func(p string) {
		ps := wnms.PathLocationIDs(p)
		if len(ps) == 0 {
			return
		}
		if id := ps[len(ps)-1]; !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	// The locations at and above path, each a prefix of it.
	var above []string
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			above = append(above, path[:i+1])
		}
	}
	if wnms.UnderAny(path, scope) {
		for _, p := range above {
			add(p)
		}
		if subtree {
			subtrees = []string{path}
		}
		return ids, subtrees
	}
	for _, p := range above {
		if profileVisibleIn(p, scope) {
			add(p)
		}
	}
	if subtree {
		for _, sp := range scope {
			if !wnms.Under(sp, path) {
				continue
			}
			subtrees = append(subtrees, sp)
			// Between path and sp: below path and above sp, so visible.
			for i := len(path); i < len(sp); i++ {
				if sp[i] == '/' {
					add(sp[:i+1])
				}
			}
		}
	}
	return ids, subtrees
}
