package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wnms/wnms/internal/wnms"
)

// layoutDoc is the small part of a floor layout kept as one JSON
// document; obstaclesInfo, the large part, has a column of its own so that
// reads can serve it as stored. The server-managed fields have columns.
type layoutDoc struct {
	Length      int64         `json:"length"`
	Width       int64         `json:"width"`
	Unit        string        `json:"unit"`
	RFParamsPL  wnms.RFParams `json:"rfParamsPL"`
	RFParamsSPM wnms.RFParams `json:"rfParamsSPM"`
	Calibrated  bool          `json:"calibrated"`
}

// layoutQueryer is what both *sql.DB and *sql.Tx offer for single-row reads.
type layoutQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Layout reads the layout of a floor. A floor without one is
// RESOURCE_NOT_FOUND.
func (s *Store) Layout(ctx context.Context, locationID int64) (*wnms.FloorLayout, error) {
	return s.layout(ctx, s.r, locationID)
}

// LayoutJSON reads the layout of a floor like Layout, but leaves
// ObstaclesInfo empty and returns it as the JSON it was stored as (the
// canonical encoding of a validated ObstaclesInfo), sparing the decoding
// of a large layout on the read path.
func (s *Store) LayoutJSON(ctx context.Context, locationID int64) (*wnms.FloorLayout, []byte, error) {
	return s.layoutJSON(ctx, s.r, locationID)
}

func (s *Store) layout(ctx context.Context, q layoutQueryer, locationID int64) (*wnms.FloorLayout, error) {
	l, obstacles, err := s.layoutJSON(ctx, q, locationID)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(obstacles, &l.ObstaclesInfo); err != nil {
		return nil, fmt.Errorf("obstacles of the layout of location %d: %w", locationID, err)
	}
	l.Resolve()
	return l, nil
}

func (s *Store) layoutJSON(ctx context.Context, q layoutQueryer, locationID int64) (*wnms.FloorLayout, []byte, error) {
	var doc string
	var obstacles []byte // scanned as bytes: one copy of a large value, not two
	var image, spm sql.NullString
	l := &wnms.FloorLayout{LocationID: locationID}
	err := q.QueryRowContext(ctx, `SELECT doc, obstacles_info, image_key, spm_file_key, uses_spm_file, modified_at, placement_changed_at
		FROM layouts WHERE location_id = $1`, locationID).
		Scan(&doc, &obstacles, &image, &spm, &l.UsesSpmFile, &l.LastModifiedTime, &l.LastSensorPlacementChangeTime)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, wnms.NotFound("floor %d has no layout", locationID)
	}
	if err != nil {
		return nil, nil, err
	}
	var d layoutDoc
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return nil, nil, fmt.Errorf("layout of location %d: %w", locationID, err)
	}
	l.Length, l.Width, l.Unit = d.Length, d.Width, d.Unit
	l.RFParamsPL, l.RFParamsSPM, l.Calibrated = d.RFParamsPL, d.RFParamsSPM, d.Calibrated
	if image.Valid {
		l.ImageKey = &image.String
	}
	if spm.Valid {
		l.SpmFileKey = &spm.String
	}
	l.Type = wnms.FloorLayoutType
	if l.UsesSpmFile {
		l.RFParams = l.RFParamsSPM
	} else {
		l.RFParams = l.RFParamsPL
	}
	return l, obstacles, nil
}

// usesSPM modes of PutLayout's upsert.
const (
	spmKeep = 1 // keep the stored usesSpmFile
	spmSet  = 2 // set it (true only while an SPM file is attached)
	spmOff  = 3 // clear it
)

// PutLayout creates or replaces the layout of l.LocationID. The file keys
// stay; both times become now. usesSpmFile nil keeps the stored flag;
// true while no SPM file is attached is VALIDATION_FAILED. A location that
// no longer exists is RESOURCE_NOT_FOUND.
func (s *Store) PutLayout(ctx context.Context, l *wnms.FloorLayout, usesSpmFile *bool) error {
	doc, err := json.Marshal(layoutDoc{Length: l.Length, Width: l.Width, Unit: l.Unit,
		RFParamsPL: l.RFParamsPL, RFParamsSPM: l.RFParamsSPM, Calibrated: l.Calibrated})
	if err != nil {
		return err
	}
	info := l.ObstaclesInfo
	if info.MaterialProperties == nil {
		info.MaterialProperties = map[string]wnms.Material{}
	}
	if info.Obstacles == nil {
		info.Obstacles = []wnms.Obstacle{}
	}
	if info.ObstacleGroupList == nil {
		info.ObstacleGroupList = []wnms.ObstacleGroup{}
	}
	obstacles, err := json.Marshal(info)
	if err != nil {
		return err
	}
	mode := spmKeep
	if usesSpmFile != nil {
		mode = spmOff
		if *usesSpmFile {
			mode = spmSet
		}
	}
	err = s.tx(ctx, func(tx *sql.Tx) error {
		var oldDoc, oldObstacles sql.NullString
		var oldSpm sql.NullBool
		err := tx.QueryRowContext(ctx, `SELECT doc, obstacles_info, uses_spm_file FROM layouts WHERE location_id = $1`,
			l.LocationID).Scan(&oldDoc, &oldObstacles, &oldSpm)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var before any
		if oldDoc.Valid {
			before = auditLayout([]byte(oldDoc.String), []byte(oldObstacles.String), oldSpm.Bool)
		}
		spm := oldSpm.Bool
		if mode != spmKeep {
			spm = mode == spmSet
		}
		auditChange(ctx, locationName(ctx, tx, l.LocationID), before, auditLayout(doc, obstacles, spm))
		if mode == spmSet {
			var key sql.NullString
			err := tx.QueryRowContext(ctx, `SELECT spm_file_key FROM layouts WHERE location_id = $1`, l.LocationID).Scan(&key)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if !key.Valid {
				return wnms.RuleBroken("no SPM file is attached to this layout; upload one with layouts/spm first")
			}
		}
		// The CASE keeps the flag consistent with the key even if a
		// concurrent delete removed the SPM file after the check above.
		_, err = tx.ExecContext(ctx, `INSERT INTO layouts (location_id, doc, obstacles_info, uses_spm_file, modified_at, placement_changed_at)
			VALUES ($1, $2, $3, FALSE, $4, $4)
			ON CONFLICT (location_id) DO UPDATE SET doc = excluded.doc, obstacles_info = excluded.obstacles_info,
				modified_at = excluded.modified_at, placement_changed_at = excluded.placement_changed_at,
				uses_spm_file = CASE WHEN $5 = 1 THEN layouts.uses_spm_file
					ELSE ($5 = 2 AND layouts.spm_file_key IS NOT NULL) END`,
			l.LocationID, string(doc), string(obstacles), s.nowMS(), mode)
		return err
	})
	if isForeignKey(err) {
		return wnms.NotFound("no location %d", l.LocationID)
	}
	return err
}

// DeleteLayout removes the layout of a floor and its files in one
// transaction. A floor without a layout is RESOURCE_NOT_FOUND.
func (s *Store) DeleteLayout(ctx context.Context, locationID int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		var oldDoc, oldObstacles string
		var oldSpm bool
		err := tx.QueryRowContext(ctx, `SELECT doc, obstacles_info, uses_spm_file FROM layouts WHERE location_id = $1`,
			locationID).Scan(&oldDoc, &oldObstacles, &oldSpm)
		if err == nil {
			auditChange(ctx, locationName(ctx, tx, locationID), auditLayout([]byte(oldDoc), []byte(oldObstacles), oldSpm), nil)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE location_id = $1`, locationID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM layouts WHERE location_id = $1`, locationID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return wnms.NotFound("floor %d has no layout", locationID)
		}
		return nil
	})
}

// auditLayoutObstacles bounds what the audit record of a layout decodes
// of its obstacles: a longer obstaclesInfo is compared and shown as its
// size and hash.
const auditLayoutObstacles = 64 << 10

// auditLayout is a stored layout (its doc and obstaclesInfo JSON, and
// whether it uses its SPM file) as its audit record compares it.
func auditLayout(doc, obstacles []byte, usesSpm bool) any {
	var info any = json.RawMessage(obstacles)
	if len(obstacles) > auditLayoutObstacles {
		sum := sha256.Sum256(obstacles)
		info = map[string]any{"bytes": len(obstacles), "sha256": hex.EncodeToString(sum[:])}
	}
	return map[string]any{"layout": json.RawMessage(doc), "obstaclesInfo": info, "usesSpmFile": usesSpm}
}
