package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wnms/wnms/internal/wnms"
)

// templateFieldList is the column list scanTemplate reads; %s is the
// location's path, which only the checks on one profile need.
const templateFieldList = `t.id, t.customer_id, t.location_id, %s, t.name, t.description, t.mnc_template_id,
	t.mnc_template, t.ssid, t.frequency_band, t.security_mode, t.security_type, t.username, t.password,
	t.passphrase, t.ping_servers, t.wan_test_url, t.ping_test_enabled`

var (
	// templateColumns reads one profile with its location's path.
	templateColumns = fmt.Sprintf(templateFieldList, "l.path") + ` FROM templates t JOIN locations l ON l.id = t.location_id`
	// templateListColumns reads profiles for a list, without the path.
	templateListColumns = fmt.Sprintf(templateFieldList, "''") + ` FROM templates t`
)

func scanTemplate(sc scanner) (*wnms.Template, error) {
	t := wnms.NewTemplate()
	var loc int64
	var user, pass, phrase sql.NullString
	var ping string
	if err := sc.Scan(&t.TemplateID, &t.CustomerID, &loc, &t.LocationPath, &t.TemplateName, &t.Description,
		&t.MncTemplateID, &t.MncTemplate, &t.SSID, &t.FrequencyBand, &t.SecurityMode, &t.SecurityType,
		&user, &pass, &phrase, &ping, &t.WanTestURL, &t.PingTestEnabled); err != nil {
		return nil, err
	}
	t.CreatedAtLocationID = wnms.LocalID(loc)
	t.Username, t.Password, t.Passphrase = templateNullString(user), templateNullString(pass), templateNullString(phrase)
	if err := json.Unmarshal([]byte(ping), &t.PingDestinationServers); err != nil {
		return nil, fmt.Errorf("template %d: ping servers: %w", t.TemplateID, err)
	}
	if t.PingDestinationServers == nil {
		t.PingDestinationServers = []string{}
	}
	return &t, nil
}

func templateNullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// templateWhere builds the condition on the templates (or template_counts)
// table, unaliased, that f selects, with its arguments; ok is false when f selects nothing.
// A selection that takes in the root's subtree is the customer's every
// profile, answered from the (customer_id, id, location_id) index alone.
func (s *Store) templateWhere(f wnms.TemplateFilter) (where string, args []any, ok bool) {
	if len(f.LocationIDs) == 0 && len(f.Subtrees) == 0 {
		return "", nil, false
	}
	args = []any{f.CustomerID}
	for _, p := range f.Subtrees {
		if p == wnms.RootPath {
			return "customer_id = $1", args, true
		}
	}
	// One IN over the locations (not an OR of two), so that the engines
	// may walk the (customer_id, location_id, ...) index when that is
	// cheaper than the id order.
	var or []string
	if len(f.LocationIDs) > 0 {
		ph := make([]string, len(f.LocationIDs))
		for i, id := range f.LocationIDs {
			args = append(args, id)
			ph[i] = "$" + strconv.Itoa(len(args))
		}
		or = append(or, "id IN ("+strings.Join(ph, ", ")+")")
	}
	for _, p := range f.Subtrees {
		lo, hi := subtreeBounds(p)
		args = append(args, lo, hi)
		or = append(or, subtreeMatch(s.dialect, "path", "$"+strconv.Itoa(len(args)-1), "$"+strconv.Itoa(len(args))))
	}
	return "customer_id = $1 AND location_id IN (SELECT id FROM locations WHERE " + strings.Join(or, " OR ") + ")", args, true
}

// Templates lists the profiles f selects in id order, and how many it
// selects in all. A page and its count come from one snapshot.
func (s *Store) Templates(ctx context.Context, f wnms.TemplateFilter) ([]wnms.Template, int, error) {
	where, args, ok := s.templateWhere(f)
	if !ok {
		return []wnms.Template{}, 0, nil
	}
	if f.Limit <= 0 {
		out, err := s.queryTemplates(ctx, s.r, `SELECT `+templateListColumns+` WHERE t.id IN (SELECT id FROM templates WHERE `+
			where+`) ORDER BY t.id`, args...)
		return out, len(out), err
	}
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, 0, err
	}
	defer tx.Rollback()
	// template_counts has the templates table's customer_id and location_id,
	// so the same condition sums the per-location counts.
	var total int
	if err := tx.QueryRowContext(ctx, `SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM template_counts WHERE `+where,
		args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	out := []wnms.Template{}
	if f.Offset >= total {
		return out, total, tx.Commit()
	}
	// First the page's ids, walking the (customer_id, id, location_id)
	// index in id order without reading rows; then those rows by key. Two
	// plain plans beat one that a planner may turn into a scan and a sort.
	n := len(args)
	rows, err := tx.QueryContext(ctx, `SELECT id FROM templates WHERE `+where+` ORDER BY id LIMIT $`+
		strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	var ids []any
	var ph []string
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, 0, err
		}
		ids = append(ids, id)
		ph = append(ph, "$"+strconv.Itoa(len(ids)))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	if len(ids) > 0 {
		if out, err = s.queryTemplates(ctx, tx, `SELECT `+templateListColumns+` WHERE t.id IN (`+
			strings.Join(ph, ", ")+`) ORDER BY t.id`, ids...); err != nil {
			return nil, 0, err
		}
	}
	return out, total, tx.Commit()
}

type templateQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Store) queryTemplates(ctx context.Context, q templateQuerier, query string, args ...any) ([]wnms.Template, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []wnms.Template{}
	for rows.Next() {
		t, err := scanTemplate(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// Template reads one profile of the customer, with its secrets. An
// unknown id, or one of another customer, is RESOURCE_NOT_FOUND.
func (s *Store) Template(ctx context.Context, customerID, id int64) (*wnms.Template, error) {
	t, err := scanTemplate(s.r.QueryRowContext(ctx, `SELECT `+templateColumns+
		` WHERE t.id = $1 AND t.customer_id = $2`, id, customerID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, wnms.NotFound("no template %d", id)
	}
	return t, err
}

func templatePingJSON(t *wnms.Template) string {
	servers := t.PingDestinationServers
	if servers == nil {
		servers = []string{}
	}
	b, _ := json.Marshal(servers)
	return string(b)
}

// insertTemplate stores t as a new profile. after, when not nil, is t's
// side of its audit record's comparison, flattened before the transaction
// (templateNewSide) with the id left to fill in.
func (s *Store) insertTemplate(ctx context.Context, tx *sql.Tx, t *wnms.Template, after wnms.DiffSide) error {
	now := s.nowMS()
	t.TemplateID = 0 // set by this run alone
	defer func() {
		if t.TemplateID != 0 {
			auditCreated(ctx, t.TemplateID)
			var side any = t
			if after != nil {
				after = maps.Clone(after)
				after["templateId"] = json.Number(strconv.FormatInt(t.TemplateID, 10))
				side = after
			}
			auditChange(ctx, t.TemplateName, nil, side)
		}
	}()
	return tx.QueryRowContext(ctx, `INSERT INTO templates (customer_id, location_id, name, description,
		mnc_template_id, mnc_template, ssid, frequency_band, security_mode, security_type, username, password,
		passphrase, ping_servers, wan_test_url, ping_test_enabled, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING id`,
		t.CustomerID, t.CreatedAtLocationID.ID, t.TemplateName, t.Description, t.MncTemplateID, t.MncTemplate,
		t.SSID, t.FrequencyBand, t.SecurityMode, t.SecurityType, t.Username, t.Password, t.Passphrase,
		templatePingJSON(t), t.WanTestURL, t.PingTestEnabled, now, now).Scan(&t.TemplateID)
}

// insertTemplateError is what an insert of t answers for err: a name
// taken is DUPLICATE_ENTITY, an unknown location VALIDATION_FAILED.
func insertTemplateError(t *wnms.Template, err error) error {
	switch {
	case isUnique(err):
		return duplicateTemplate(t)
	case isForeignKey(err):
		return wnms.RuleBroken("no location %d", t.CreatedAtLocationID.ID)
	}
	return err
}

func duplicateTemplate(t *wnms.Template) error {
	return wnms.Errorf(wnms.DuplicateEntity, "a template named %q exists at location %d",
		t.TemplateName, t.CreatedAtLocationID.ID)
}

// CreateTemplate stores a new profile of t.CustomerID at
// t.CreatedAtLocationID and fills t.TemplateID. A name taken there is
// DUPLICATE_ENTITY; an unknown location is VALIDATION_FAILED.
func (s *Store) CreateTemplate(ctx context.Context, t *wnms.Template) error {
	after := templateNewSide(ctx, t)
	err := s.tx(ctx, func(tx *sql.Tx) error { return s.insertTemplate(ctx, tx, t, after) })
	return insertTemplateError(t, err)
}

// templateNewSide is a new profile's side of its audit record's
// comparison, made before its transaction (what a change does inside it,
// every other change on the SQLite writer waits for); nil when the call
// keeps no audit record. Its id is 0 until insertTemplate knows it.
func templateNewSide(ctx context.Context, t *wnms.Template) wnms.DiffSide {
	if wnms.AuditFrom(ctx) == nil {
		return nil
	}
	c := *t
	c.TemplateID = 0
	return wnms.Flatten(&c)
}

// maxTemplateCopies bounds the search for a free copy name.
const maxTemplateCopies = 10000

// templateCopyName is the n-th candidate name of a copy of name: the name itself,
// then "name (copy)", "name (copy 2)", ..., the name cut short so that the
// whole stays within wnms.MaxTemplateName characters.
func templateCopyName(name string, n int) string {
	if n == 0 {
		return name
	}
	suffix := " (copy)"
	if n > 1 {
		suffix = " (copy " + strconv.Itoa(n) + ")"
	}
	room := wnms.MaxTemplateName - utf8.RuneCountInString(suffix)
	if r := []rune(name); len(r) > room {
		name = strings.TrimRight(string(r[:room]), " ")
	}
	return name + suffix
}

// CopyTemplate stores t as a new profile, naming it with the first of
// templateCopyName's candidates that is free at its location, and fills
// t.TemplateID and t.TemplateName.
func (s *Store) CopyTemplate(ctx context.Context, t *wnms.Template) error {
	base := t.TemplateName
	var err error
	// On PostgreSQL a concurrent insert may take the chosen name between the
	// check and the insert; the unique index catches it and we look again.
	for attempt := 0; attempt < 3; attempt++ {
		err = s.tx(ctx, func(tx *sql.Tx) error {
			for n := 0; n < maxTemplateCopies; n++ {
				name := templateCopyName(base, n)
				var taken int
				if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM templates
					WHERE customer_id = $1 AND location_id = $2 AND lower(name) = lower($3)`,
					t.CustomerID, t.CreatedAtLocationID.ID, name).Scan(&taken); err != nil {
					return err
				}
				if taken == 0 {
					t.TemplateName = name
					return s.insertTemplate(ctx, tx, t, nil)
				}
			}
			return wnms.Errorf(wnms.Conflict, "no free name for a copy of %q at location %d", base, t.CreatedAtLocationID.ID)
		})
		if !isUnique(err) {
			break
		}
	}
	return insertTemplateError(t, err)
}

// EditTemplate changes profile id of the customer in one transaction: it
// reads the profile, locked until the transaction ends, lets edit make the
// new profile of it (masked secrets resolve against exactly the values
// they replace), and writes that back; the id, customer and location never
// change. An unknown profile is RESOURCE_NOT_FOUND, a name taken at its
// location DUPLICATE_ENTITY; an error from edit is returned as is and
// nothing changes.
func (s *Store) EditTemplate(ctx context.Context, customerID, id int64,
	edit func(old *wnms.Template) (*wnms.Template, error)) (*wnms.Template, error) {
	var out *wnms.Template
	err := s.txSolo(ctx, func(tx *sql.Tx) error { // edit checks against the store
		old, err := scanTemplate(tx.QueryRowContext(ctx, `SELECT `+templateColumns+
			` WHERE t.id = $1 AND t.customer_id = $2`+forUpdate(s.dialect, "t"), id, customerID))
		if errors.Is(err, sql.ErrNoRows) {
			return wnms.NotFound("no template %d", id)
		}
		if err != nil {
			return err
		}
		t, err := edit(old)
		if err != nil {
			return err
		}
		t.TemplateID, t.CustomerID, t.CreatedAtLocationID = old.TemplateID, old.CustomerID, old.CreatedAtLocationID
		t.LocationPath = old.LocationPath
		auditChange(ctx, t.TemplateName, old, t)
		_, err = tx.ExecContext(ctx, `UPDATE templates SET name = $1, description = $2, mnc_template_id = $3,
			mnc_template = $4, ssid = $5, frequency_band = $6, security_mode = $7, security_type = $8, username = $9,
			password = $10, passphrase = $11, ping_servers = $12, wan_test_url = $13, ping_test_enabled = $14,
			updated_at = $15 WHERE id = $16 AND customer_id = $17`,
			t.TemplateName, t.Description, t.MncTemplateID, t.MncTemplate, t.SSID, t.FrequencyBand, t.SecurityMode,
			t.SecurityType, t.Username, t.Password, t.Passphrase, templatePingJSON(t), t.WanTestURL, t.PingTestEnabled,
			s.nowMS(), t.TemplateID, t.CustomerID)
		if isUnique(err) {
			return duplicateTemplate(t)
		}
		out = t
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteTemplate removes a profile of the customer; an unknown one is
// RESOURCE_NOT_FOUND.
func (s *Store) DeleteTemplate(ctx context.Context, customerID, id int64) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		old, err := scanTemplate(tx.QueryRowContext(ctx, `SELECT `+templateColumns+
			` WHERE t.id = $1 AND t.customer_id = $2`, id, customerID))
		if errors.Is(err, sql.ErrNoRows) {
			return wnms.NotFound("no template %d", id)
		}
		if err != nil {
			return err
		}
		auditChange(ctx, old.TemplateName, old, nil)
		_, err = tx.ExecContext(ctx, `DELETE FROM templates WHERE id = $1 AND customer_id = $2`, id, customerID)
		return err
	})
}
