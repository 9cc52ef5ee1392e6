package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/wnms/wnms/internal/wnms"
)

// AttachFile stores f as the image or SPM file of the layout of
// f.LocationID, replacing (and deleting) the previous file of that kind,
// sets the layout's times to now, and returns the updated layout. An SPM
// file also sets usesSpmFile. A floor without a layout is
// RESOURCE_NOT_FOUND.
func (s *Store) AttachFile(ctx context.Context, f *wnms.File) (*wnms.FloorLayout, error) {
	var keyColumn, setKey string
	switch f.Kind {
	case wnms.FileImage:
		keyColumn = `image_key`
		setKey = `UPDATE layouts SET image_key = $1 WHERE location_id = $2`
	case wnms.FileSPM:
		keyColumn = `spm_file_key`
		setKey = `UPDATE layouts SET spm_file_key = $1, uses_spm_file = TRUE WHERE location_id = $2`
	default:
		return nil, fmt.Errorf("unknown file kind %q", f.Kind)
	}
	now := s.nowMS()
	f.CreatedAt = now
	f.Size = int64(len(f.Data))
	digest := sha256.Sum256(f.Data)
	sum := hex.EncodeToString(digest[:])
	var out *wnms.FloorLayout
	err := s.tx(ctx, func(tx *sql.Tx) error {
		// Touching the row first locks it on PostgreSQL, so concurrent
		// uploads to one layout replace each other's files in turn and
		// none is left behind.
		res, err := tx.ExecContext(ctx, `UPDATE layouts SET modified_at = $1, placement_changed_at = $1 WHERE location_id = $2`,
			now, f.LocationID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return wnms.NotFound("floor %d has no layout; set one with POST layouts first", f.LocationID)
		}
		var old sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT `+keyColumn+` FROM layouts WHERE location_id = $1`, f.LocationID).Scan(&old); err != nil {
			return err
		}
		// The audit record shows a file by its type, size and hash, never
		// its bytes or key (a key is the file's link).
		var before any
		if old.Valid {
			var was struct {
				ContentType string `json:"contentType"`
				Size        int64  `json:"size"`
			}
			if err := tx.QueryRowContext(ctx, `SELECT content_type, size FROM files WHERE file_key = $1`, old.String).Scan(
				&was.ContentType, &was.Size); err == nil {
				before = map[string]any{f.Kind: was}
			}
		}
		auditChange(ctx, locationName(ctx, tx, f.LocationID), before, map[string]any{f.Kind: map[string]any{
			"contentType": f.ContentType, "size": f.Size, "sha256": sum}})
		if _, err := tx.ExecContext(ctx, `INSERT INTO files (file_key, location_id, kind, content_type, size, bytes, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, f.Key, f.LocationID, f.Kind, f.ContentType, f.Size, f.Data, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, setKey, f.Key, f.LocationID); err != nil {
			return err
		}
		if old.Valid {
			if _, err := tx.ExecContext(ctx, `DELETE FROM files WHERE file_key = $1`, old.String); err != nil {
				return err
			}
		}
		out, err = s.layout(ctx, tx, f.LocationID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// File reads a stored file with its bytes. An unknown key is
// RESOURCE_NOT_FOUND.
func (s *Store) File(ctx context.Context, key string) (*wnms.File, error) {
	var f wnms.File
	err := s.r.QueryRowContext(ctx, `SELECT file_key, location_id, 0, 0, kind, content_type, size, bytes, created_at
		FROM files WHERE file_key = $1
		UNION ALL SELECT file_key, location_id, customer_id, user_id, kind, content_type, size, bytes, created_at
		FROM exports WHERE file_key = $1`, key).
		Scan(&f.Key, &f.LocationID, &f.CustomerID, &f.UserID, &f.Kind, &f.ContentType, &f.Size, &f.Data, &f.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, wnms.NotFound("no file %q", key)
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// PutExport stores an export file (see wnms.FileStore).
func (s *Store) PutExport(ctx context.Context, f *wnms.File) error {
	f.CreatedAt, f.Size = s.nowMS(), int64(len(f.Data))
	_, err := s.w.ExecContext(ctx, `INSERT INTO exports (file_key, customer_id, user_id, location_id, kind, content_type, size, bytes, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, f.Key, f.CustomerID, f.UserID, f.LocationID, f.Kind, f.ContentType, f.Size, f.Data, f.CreatedAt)
	return err
}

// LogBundles tells which of keys are log bundles of the customer.
func (s *Store) LogBundles(ctx context.Context, customerID int64, keys []string) (map[string]bool, error) {
	out := make(map[string]bool, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	cond, arg := inList(s.dialect, "$3", keys)
	found, err := queryColumn[string](ctx, s.r, `SELECT file_key FROM exports WHERE customer_id = $1 AND kind = $2 AND file_key`+cond,
		customerID, wnms.FileBundle, arg)
	for _, k := range found {
		out[k] = true
	}
	return out, err
}
