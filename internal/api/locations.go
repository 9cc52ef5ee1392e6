package api

import (
	"net/http"
	"strings"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// locationTree is GET /locations/tree: the locations the caller sees, with
// their ancestors (accessibleToUser false) so the tree stays connected.
func (s *Server) locationTree(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	all, err := s.Store.Locations(r.Context(), c.CustomerID())
	if err != nil {
		return err
	}
	paths, err := c.ScopePaths(r.Context())
	if err != nil {
		return err
	}
	include := map[int64]bool{}
	for _, l := range all {
		if wnms.UnderAny(l.Path, paths) {
			l.AccessibleToUser = true
			include[l.ID.ID] = true
			continue
		}
		for _, p := range paths {
			if wnms.Under(p, l.Path) {
				include[l.ID.ID] = true
			}
		}
	}
	out := map[string]*wnms.Location{}
	for _, l := range all {
		if !include[l.ID.ID] {
			continue
		}
		if l.Children != nil {
			kids := []wnms.LocationID{}
			for _, k := range *l.Children {
				if include[k.ID] {
					kids = append(kids, k)
				}
			}
			l.Children = &kids
		}
		out[l.ID.Key()] = l
	}
	httpkit.WriteJSON(w, http.StatusOK, struct {
		RootLocationID wnms.LocationID           `json:"rootLocationId"`
		Locations      map[string]*wnms.Location `json:"locations"`
	}{wnms.LocalID(wnms.RootLocation), out})
	return nil
}

// locationInput is the writable part of a location.
type locationInput struct {
	Type        string           `json:"type"`
	ID          *wnms.LocationID `json:"id"`
	ParentID    *wnms.LocationID `json:"parentId"`
	Name        *string          `json:"name"`
	TimezoneID  *string          `json:"timezoneId"`
	LocationTag *string          `json:"locationTag"`
}

func checkLocationFields(in *locationInput) error {
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
		if err := wnms.CheckText("location.name", *in.Name, 1, 64); err != nil {
			return err
		}
	}
	if in.TimezoneID != nil && *in.TimezoneID != "" {
		if err := wnms.CheckTimeZone("location.timezoneId", *in.TimezoneID); err != nil {
			return err
		}
	}
	if in.LocationTag != nil {
		if err := wnms.CheckText("location.locationTag", *in.LocationTag, 0, 128); err != nil {
			return err
		}
	}
	return nil
}

func checkLocalID(field string, id *wnms.LocationID) error {
	if id == nil {
		return wnms.Invalid(field, "required")
	}
	if id.Type != "" && id.Type != wnms.LocalLocationID {
		return wnms.Invalid(field, "type must be %s", wnms.LocalLocationID)
	}
	return nil
}

// createLocation is PUT /locations {parentLocation, location}.
func (s *Server) createLocation(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	var b struct {
		ParentLocation *wnms.LocationID `json:"parentLocation"`
		Location       *locationInput   `json:"location"`
	}
	if err := httpkit.DecodeJSON(w, r, &b, httpkit.MaxJSONBody); err != nil {
		return err
	}
	if err := checkLocalID("parentLocation", b.ParentLocation); err != nil {
		return err
	}
	if b.Location == nil {
		return wnms.Invalid("location", "required")
	}
	in := b.Location
	if in.Type != wnms.FolderLocation && in.Type != wnms.FloorLocation {
		return wnms.Invalid("location.type", "must be %s or %s", wnms.FolderLocation, wnms.FloorLocation)
	}
	if in.Name == nil {
		return wnms.Invalid("location.name", "required")
	}
	if err := checkLocationFields(in); err != nil {
		return err
	}
	parent, err := s.locationFor(r.Context(), c, b.ParentLocation.ID)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return wnms.Invalid("parentLocation", "no location %d", b.ParentLocation.ID)
	}
	if err != nil {
		return err
	}
	if !parent.IsFolder() {
		return wnms.Invalid("parentLocation", "location %d is a floor; floors have no children", parent.ID.ID)
	}
	if parent.ID.ID == wnms.UnknownLocation {
		return wnms.Invalid("parentLocation", "the unknown location takes no children")
	}
	l := &wnms.Location{Type: in.Type, ParentID: &parent.ID, Name: *in.Name, LocationTag: in.LocationTag,
		TimezoneID: parent.TimezoneID, CustomerID: c.CustomerID()}
	if in.TimezoneID != nil && *in.TimezoneID != "" {
		l.TimezoneID = *in.TimezoneID
	}
	if err := s.Store.CreateLocation(r.Context(), l); err != nil {
		return wnms.AtField(err, "parentLocation")
	}
	return s.writeLocation(w, r, c, l.ID.ID)
}

func (s *Server) writeLocation(w http.ResponseWriter, r *http.Request, c *wnms.Caller, id int64) error {
	l, err := s.locationFor(r.Context(), c, id)
	if err != nil {
		return err
	}
	l.AccessibleToUser = true
	httpkit.WriteJSON(w, http.StatusOK, l)
	return nil
}

// modifyLocation is POST /locations: rename, move, re-tag or re-zone.
func (s *Server) modifyLocation(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	var in locationInput
	if err := httpkit.DecodeJSON(w, r, &in, httpkit.MaxJSONBody); err != nil {
		return err
	}
	if err := checkLocalID("id", in.ID); err != nil {
		return err
	}
	if in.ID.ID == wnms.RootLocation || in.ID.ID == wnms.UnknownLocation {
		return wnms.Invalid("id", "the root and unknown locations cannot be changed")
	}
	if err := checkLocationFields(&in); err != nil {
		return err
	}
	l, err := s.locationFor(r.Context(), c, in.ID.ID)
	if err != nil {
		return err
	}
	if in.Type != "" && in.Type != l.Type {
		return wnms.Invalid("type", "a %s cannot become a %s", l.Type, in.Type)
	}
	if in.ParentID != nil {
		if err := checkLocalID("parentId", in.ParentID); err != nil {
			return err
		}
		if in.ParentID.ID != l.ParentID.ID {
			np, err := s.locationFor(r.Context(), c, in.ParentID.ID)
			if wnms.ErrorCode(err) == wnms.ResourceNotFound {
				return wnms.Invalid("parentId", "no location %d", in.ParentID.ID)
			}
			if err != nil {
				return err
			}
			if np.ID.ID == wnms.UnknownLocation {
				return wnms.Invalid("parentId", "the unknown location takes no children")
			}
			l.ParentID = &np.ID
		}
	}
	if in.Name != nil {
		l.Name = *in.Name
	}
	if in.TimezoneID != nil && *in.TimezoneID != "" {
		l.TimezoneID = *in.TimezoneID
	}
	if in.LocationTag != nil {
		l.LocationTag = in.LocationTag
	}
	if err := s.Store.UpdateLocation(r.Context(), l); err != nil {
		return wnms.AtField(err, "parentId")
	}
	return s.writeLocation(w, r, c, l.ID.ID)
}

// deleteLocation is DELETE /locations/{id}.
func (s *Server) deleteLocation(w http.ResponseWriter, r *http.Request) error {
	c := wnms.CallerFrom(r.Context())
	id, err := httpkit.PathInt(r, "id")
	if err != nil {
		return err
	}
	if id == wnms.RootLocation || id == wnms.UnknownLocation {
		return wnms.Invalid("id", "the root and unknown locations cannot be deleted")
	}
	if _, err := s.locationFor(r.Context(), c, id); err != nil {
		return err
	}
	if err := s.Store.DeleteLocation(r.Context(), id); err != nil {
		return err
	}
	return noContent(w)
}
