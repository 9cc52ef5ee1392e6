package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wnms/wnms/internal/wnms"
)

// Global policies (api.md §9) live in global_policies, one row per
// customer and policy type, as JSON with their secrets in clear. A missing
// row means the built-in default.

// SNMPPolicy returns the SNMP policy in force for the customer with its
// secrets unmasked: the stored one, or the built-in default. The SNMP
// runtime (traps and agent) reads its settings here; answers to clients
// must go through Masked.
func (s *Store) SNMPPolicy(ctx context.Context, customerID int64) (*wnms.SNMPPolicy, error) {
	p := wnms.DefaultSNMPPolicy()
	if _, err := s.readPolicy(ctx, s.r, customerID, wnms.SNMPPolicyType, false, p); err != nil {
		return nil, err
	}
	return p, nil
}

// UpdateSNMPPolicy replaces the customer's SNMP policy by update(current),
// where current is the policy in force, read and replaced in one
// transaction (the row is locked on PostgreSQL; SQLite writers are
// serialized), so concurrent updates never resolve masked secrets against
// a policy that is no longer there. An error from update is returned as is
// and nothing changes. It returns the stored policy.
func (s *Store) UpdateSNMPPolicy(ctx context.Context, customerID int64,
	update func(current *wnms.SNMPPolicy) (*wnms.SNMPPolicy, error)) (*wnms.SNMPPolicy, error) {
	return updatePolicy(ctx, s, customerID, wnms.SNMPPolicyType, wnms.DefaultSNMPPolicy, update)
}

// updatePolicy replaces the customer's stored value of the type by
// update(current), current being the stored one or def(), read and
// replaced in one transaction (the row is locked on PostgreSQL; SQLite
// writers are serialized). An error from update is returned as is and
// nothing changes.
func updatePolicy[T any](ctx context.Context, s *Store, customerID int64, typ string, def func() *T,
	update func(current *T) (*T, error)) (*T, error) {
	var out *T
	// Solo: update may check the new value against what is stored (data
	// sources' addresses against every customer's).
	err := s.txSolo(ctx, func(tx *sql.Tx) error {
		// One update of a type at a time across customers too, so that a
		// check against every customer's stored value (data sources'
		// prefixes) sees the other's committed one, never both pass.
		if err := lockKey(ctx, tx, s.dialect, "policy:"+typ); err != nil {
			return err
		}
		cur := def()
		// The default row goes in first so that the row exists to be locked.
		if err := s.insertPolicy(ctx, tx, customerID, typ, cur); err != nil {
			return err
		}
		if _, err := s.readPolicy(ctx, tx, customerID, typ, true, cur); err != nil {
			return err
		}
		before, err := json.Marshal(cur) // update may change cur
		if err != nil {
			return err
		}
		next, err := update(cur)
		if err != nil {
			return err
		}
		auditChange(ctx, policyNames[typ], json.RawMessage(before), next)
		if err := s.writePolicy(ctx, tx, customerID, typ, next); err != nil {
			return err
		}
		out = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DataSources returns the customer's data source configuration with its
// secrets in clear (the listeners sign with them); answers to clients go
// through Masked. None stored is an empty one.
func (s *Store) DataSources(ctx context.Context, customerID int64) (*wnms.DataSources, error) {
	d := wnms.EmptyDataSources()
	if _, err := s.readPolicy(ctx, s.r, customerID, wnms.DataSourcesType, false, d); err != nil {
		return nil, err
	}
	return d, nil
}

// UpdateDataSources replaces the customer's data source configuration by
// update(current), as UpdateSNMPPolicy does.
func (s *Store) UpdateDataSources(ctx context.Context, customerID int64,
	update func(current *wnms.DataSources) (*wnms.DataSources, error)) (*wnms.DataSources, error) {
	return updatePolicy(ctx, s, customerID, wnms.DataSourcesType, wnms.EmptyDataSources, update)
}

// AllDataSources returns every customer's data source configuration that
// lists a source or a poller, by customer: what the listeners and the
// pollers serve.
func (s *Store) AllDataSources(ctx context.Context) (map[int64]*wnms.DataSources, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT customer_id, body FROM global_policies WHERE policy_type = $1`, wnms.DataSourcesType)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]*wnms.DataSources{}
	for rows.Next() {
		var id int64
		var body string
		if err := rows.Scan(&id, &body); err != nil {
			return nil, err
		}
		d := wnms.EmptyDataSources()
		if err := json.Unmarshal([]byte(body), d); err != nil {
			return nil, fmt.Errorf("stored %s of customer %d: %w", wnms.DataSourcesType, id, err)
		}
		if len(d.Sources) > 0 || len(d.Pollers) > 0 {
			out[id] = d
		}
	}
	return out, rows.Err()
}

// HotspotSSIDPolicy returns the hotspot SSID policy in force for the
// customer: the stored one, or the built-in default.
func (s *Store) HotspotSSIDPolicy(ctx context.Context, customerID int64) (*wnms.HotspotSSIDPolicy, error) {
	p := wnms.DefaultHotspotSSIDPolicy()
	if _, err := s.readPolicy(ctx, s.r, customerID, wnms.HotspotSSIDPolicyType, false, p); err != nil {
		return nil, err
	}
	if p.SSIDs == nil {
		p.SSIDs = []string{}
	}
	return p, nil
}

// PutHotspotSSIDPolicy replaces the customer's hotspot SSID policy.
//
// Everything that does not need the stored value is done before the
// transaction (on SQLite every change waits for the one writer while
// another's transaction runs): the new value's JSON and, for the audit
// record, its side of the comparison.
func (s *Store) PutHotspotSSIDPolicy(ctx context.Context, customerID int64, p *wnms.HotspotSSIDPolicy) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	var after wnms.DiffSide
	audited := wnms.AuditFrom(ctx) != nil
	if audited {
		after = wnms.Flatten(json.RawMessage(body))
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		if audited { // the value it replaces, for the record's changes only
			cur := wnms.DefaultHotspotSSIDPolicy()
			if _, err := s.readPolicy(ctx, tx, customerID, wnms.HotspotSSIDPolicyType, true, cur); err != nil {
				return err
			}
			auditChange(ctx, policyNames[wnms.HotspotSSIDPolicyType], cur, after)
		}
		return s.writePolicyBody(ctx, tx, customerID, wnms.HotspotSSIDPolicyType, body)
	})
}

// policyNames name the global policies in their audit records.
var policyNames = map[string]string{
	wnms.SNMPPolicyType:        "SNMP policy",
	wnms.HotspotSSIDPolicyType: "hotspot SSID policy",
	wnms.DataSourcesType:       "data sources",
}

// selectPolicy reads the stored value of a policy type of a customer.
const selectPolicy = `SELECT body FROM global_policies WHERE customer_id = $1 AND policy_type = $2`

type policyWriter interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

type policyReader interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// readPolicy decodes the stored policy of the type into v, reporting
// whether one is stored (v is untouched when not). lock locks the row
// for the rest of the transaction.
func (s *Store) readPolicy(ctx context.Context, q policyReader, customerID int64, typ string, lock bool, v any) (bool, error) {
	query := selectPolicy
	if lock {
		query += forUpdate(s.dialect, "global_policies")
	}
	var row *sql.Row
	if tx, ok := q.(*sql.Tx); ok && preparesOnWriter(s.dialect) {
		// In a change's transaction on the one SQLite writer: prepared once.
		if st := s.audit.stmt(ctx, tx, func(p *auditStmts) *sql.Stmt { return p.policy }); st != nil {
			row = st.QueryRowContext(ctx, customerID, typ)
		}
	}
	if row == nil {
		row = q.QueryRowContext(ctx, query, customerID, typ)
	}
	var body string
	err := row.Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		return false, fmt.Errorf("stored %s of customer %d: %w", typ, customerID, err)
	}
	return true, nil
}

// insertPolicy stores v unless a policy of the type is stored already.
func (s *Store) insertPolicy(ctx context.Context, x policyWriter, customerID int64, typ string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = x.ExecContext(ctx, `INSERT INTO global_policies (customer_id, policy_type, body, updated_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (customer_id, policy_type) DO NOTHING`, customerID, typ, string(b), s.nowMS())
	return err
}

// writePolicy stores v as the policy of the type, replacing any.
func (s *Store) writePolicy(ctx context.Context, x policyWriter, customerID int64, typ string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.writePolicyBody(ctx, x, customerID, typ, b)
}

// upsertPolicy replaces the policy of a type of a customer.
const upsertPolicy = `INSERT INTO global_policies (customer_id, policy_type, body, updated_at)
	VALUES ($1, $2, $3, $4) ON CONFLICT (customer_id, policy_type)
	DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`

// writePolicyBody stores body, a policy's JSON, as the policy of the type,
// replacing any; in a change's transaction on the SQLite writer, with the
// statement prepared there once.
func (s *Store) writePolicyBody(ctx context.Context, x policyWriter, customerID int64, typ string, body []byte) error {
	args := []any{customerID, typ, string(body), s.nowMS()}
	if tx, ok := x.(*sql.Tx); ok && preparesOnWriter(s.dialect) {
		if st := s.audit.stmt(ctx, tx, func(p *auditStmts) *sql.Stmt { return p.upsertPolicy }); st != nil {
			_, err := st.ExecContext(ctx, args...)
			return err
		}
	}
	_, err := x.ExecContext(ctx, upsertPolicy, args...)
	return err
}
