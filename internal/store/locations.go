package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/wnms"
)

const locationColumns = `id, customer_id, parent_id, type, name, timezone_id, location_tag, path FROM locations`

func scanLocation(sc scanner) (*wnms.Location, error) {
	var l wnms.Location
	var id int64
	var customer, parent sql.NullInt64
	var tag sql.NullString
	if err := sc.Scan(&id, &customer, &parent, &l.Type, &l.Name, &l.TimezoneID, &tag, &l.Path); err != nil {
		return nil, err
	}
	l.ID = wnms.LocalID(id)
	l.CustomerID = customer.Int64
	if parent.Valid {
		p := wnms.LocalID(parent.Int64)
		l.ParentID = &p
	}
	if tag.Valid {
		l.LocationTag = &tag.String
	}
	l.DefaultLocation = id == wnms.UnknownLocation
	return &l, nil
}

// Locations lists the locations a customer can have: its own and the
// shared root and unknown locations, in tree order (by path, then id).
// Folders carry their children.
func (s *Store) Locations(ctx context.Context, customerID int64) ([]*wnms.Location, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+locationColumns+
		` WHERE customer_id IS NULL OR customer_id = $1 ORDER BY path, id`, customerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*wnms.Location
	byID := map[int64]*wnms.Location{}
	for rows.Next() {
		l, err := scanLocation(rows)
		if err != nil {
			return nil, err
		}
		if l.IsFolder() {
			l.Children = &[]wnms.LocationID{}
		}
		out = append(out, l)
		byID[l.ID.ID] = l
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, l := range out {
		if l.ParentID != nil {
			if p := byID[l.ParentID.ID]; p != nil && p.Children != nil {
				*p.Children = append(*p.Children, l.ID)
			}
		}
	}
	return out, nil
}

// Location reads one location with its children. An unknown id is
// RESOURCE_NOT_FOUND.
func (s *Store) Location(ctx context.Context, id int64) (*wnms.Location, error) {
	return location(ctx, s.r, id)
}

func location(ctx context.Context, q querier, id int64) (*wnms.Location, error) {
	l, err := scanLocation(q.QueryRowContext(ctx, `SELECT `+locationColumns+` WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, wnms.NotFound("no location %d", id)
	}
	if err != nil {
		return nil, err
	}
	if l.IsFolder() {
		ids, err := queryIDs(ctx, q, `SELECT id FROM locations WHERE parent_id = $1 ORDER BY id`, id)
		if err != nil {
			return nil, err
		}
		kids := make([]wnms.LocationID, len(ids))
		for i, k := range ids {
			kids[i] = wnms.LocalID(k)
		}
		l.Children = &kids
	}
	return l, nil
}

// LocationPaths returns the materialized paths of the given location ids
// that exist; unknown ids are left out.
func (s *Store) LocationPaths(ctx context.Context, ids []int64) (map[int64]string, error) {
	return locationPaths(ctx, s.dialect, s.r, ids)
}

func locationPaths(ctx context.Context, d Dialect, q querier, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	query, args := idList(d, `SELECT id, path FROM locations WHERE id`, ids)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p string
		if err := rows.Scan(&id, &p); err != nil {
			return nil, err
		}
		out[id] = p
	}
	return out, rows.Err()
}

// CreateLocation stores a new location under l.ParentID and fills l.ID and
// l.Path. A sibling with the same name is DUPLICATE_ENTITY.
func (s *Store) CreateLocation(ctx context.Context, l *wnms.Location) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		parentPath, err := folderPath(ctx, tx, l.ParentID.ID)
		if err != nil {
			return err
		}
		var id int64
		err = tx.QueryRowContext(ctx, `INSERT INTO locations (customer_id, parent_id, type, name, timezone_id, location_tag, path, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, '', $7) RETURNING id`,
			l.CustomerID, l.ParentID.ID, l.Type, l.Name, l.TimezoneID, l.LocationTag, s.nowMS()).Scan(&id)
		if err != nil {
			return err
		}
		l.ID = wnms.LocalID(id)
		l.Path = wnms.PathOf(parentPath, id)
		auditCreated(ctx, id)
		auditChange(ctx, l.Name, nil, auditLocation(l.Type, l.Name, l.TimezoneID, l.LocationTag, l.ParentID.ID))
		_, err = tx.ExecContext(ctx, `UPDATE locations SET path = $1 WHERE id = $2`, l.Path, id)
		return err
	})
	if isUnique(err) {
		return wnms.Errorf(wnms.DuplicateEntity, "a location named %q exists under location %d", l.Name, l.ParentID.ID)
	}
	return err
}

// folderPath is the path of location id, which is to be a parent: an
// unknown location or a floor (floors have no children) is
// VALIDATION_FAILED.
func folderPath(ctx context.Context, tx *sql.Tx, id int64) (string, error) {
	var path, typ string
	err := tx.QueryRowContext(ctx, `SELECT path, type FROM locations WHERE id = $1`, id).Scan(&path, &typ)
	if errors.Is(err, sql.ErrNoRows) {
		return "", wnms.RuleBroken("no location %d", id)
	}
	if err != nil {
		return "", err
	}
	if typ != wnms.FolderLocation {
		return "", wnms.RuleBroken("location %d is a floor; floors have no children", id)
	}
	return path, nil
}

// UpdateLocation renames, re-tags, re-zones or moves a location; a move
// carries its subtree along. Moving a location under itself is
// VALIDATION_FAILED.
func (s *Store) UpdateLocation(ctx context.Context, l *wnms.Location) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var oldPath, oldType, oldName, oldTZ string
		var oldTag *string
		var oldParent sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT path, parent_id, type, name, timezone_id, location_tag FROM locations WHERE id = $1`,
			l.ID.ID).Scan(&oldPath, &oldParent, &oldType, &oldName, &oldTZ, &oldTag)
		if errors.Is(err, sql.ErrNoRows) {
			return wnms.NotFound("no location %d", l.ID.ID)
		}
		if err != nil {
			return err
		}
		newPath := oldPath
		if l.ParentID != nil && l.ParentID.ID != oldParent.Int64 {
			parentPath, err := folderPath(ctx, tx, l.ParentID.ID)
			if err != nil {
				return err
			}
			if wnms.Under(parentPath, oldPath) {
				return wnms.RuleBroken("cannot move a location under itself")
			}
			newPath = wnms.PathOf(parentPath, l.ID.ID)
			lo, hi := subtreeBounds(oldPath)
			if _, err := tx.ExecContext(ctx, `UPDATE locations SET path = $1 || substr(path, $2) WHERE `+
				subtreeMatch(s.dialect, "path", "$3", "$4"), newPath, len(oldPath)+1, lo, hi); err != nil {
				return err
			}
		}
		parent := oldParent.Int64
		if l.ParentID != nil {
			parent = l.ParentID.ID
		}
		auditChange(ctx, l.Name, auditLocation(oldType, oldName, oldTZ, oldTag, oldParent.Int64),
			auditLocation(oldType, l.Name, l.TimezoneID, l.LocationTag, parent))
		_, err = tx.ExecContext(ctx, `UPDATE locations SET name = $1, timezone_id = $2, location_tag = $3, parent_id = $4
			WHERE id = $5`, l.Name, l.TimezoneID, l.LocationTag, parent, l.ID.ID)
		l.Path = newPath
		return err
	})
	if isUnique(err) {
		return wnms.Errorf(wnms.DuplicateEntity, "a sibling named %q exists", l.Name)
	}
	return err
}

// DeleteLocation removes a location that has no children and nothing
// attached (CONFLICT otherwise).
func (s *Store) DeleteLocation(ctx context.Context, id int64) error {
	err := s.tx(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM locations WHERE parent_id = $1`, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return wnms.Errorf(wnms.Conflict, "location %d has %d children", id, n)
		}
		var typ, name, tz string
		var tag *string
		var parent sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT type, name, timezone_id, location_tag, parent_id FROM locations WHERE id = $1`,
			id).Scan(&typ, &name, &tz, &tag, &parent)
		if errors.Is(err, sql.ErrNoRows) {
			return wnms.NotFound("no location %d", id)
		}
		if err != nil {
			return err
		}
		auditChange(ctx, name, auditLocation(typ, name, tz, tag, parent.Int64), nil)
		res, err := tx.ExecContext(ctx, `DELETE FROM locations WHERE id = $1`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return wnms.NotFound("no location %d", id)
		}
		return nil
	})
	if isForeignKey(err) {
		return wnms.Errorf(wnms.Conflict, "location %d still has layouts, devices or templates", id)
	}
	return err
}

// LocationNamePath is the location's place for people: the names from
// below the root down to it, as "/HQ/Floor 1" ("" for an unknown id).
func (s *Store) LocationNamePath(ctx context.Context, id int64) (string, error) {
	paths, err := s.LocationPaths(ctx, []int64{id})
	if err != nil || paths[id] == "" {
		return "", err
	}
	var ids []int64
	for _, part := range strings.Split(strings.Trim(paths[id], "/"), "/") {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil {
			return "", fmt.Errorf("location %d has a bad path %q", id, paths[id])
		}
		if n != wnms.RootLocation {
			ids = append(ids, n)
		}
	}
	query, args := idList(s.dialect, `SELECT id, name FROM locations WHERE id`, ids)
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	names := map[int64]string{}
	for rows.Next() {
		var n int64
		var name string
		if err := rows.Scan(&n, &name); err != nil {
			return "", err
		}
		names[n] = name
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	var b strings.Builder
	for _, n := range ids {
		b.WriteString("/" + names[n])
	}
	return b.String(), nil
}

// auditLocation is a location as its audit record compares it.
func auditLocation(typ, name, timezone string, tag *string, parent int64) any {
	return struct {
		Type        string  `json:"type"`
		Name        string  `json:"name"`
		TimezoneID  string  `json:"timezoneId"`
		LocationTag *string `json:"locationTag"`
		ParentID    int64   `json:"parentId"`
	}{typ, name, timezone, tag, parent}
}

// locationName is the name of location id read through q, "" when unknown:
// how the audit log names a floor's layout, files and zones.
func locationName(ctx context.Context, q querier, id int64) string {
	var name string
	if err := q.QueryRowContext(ctx, `SELECT name FROM locations WHERE id = $1`, id).Scan(&name); err != nil {
		return ""
	}
	return name
}
