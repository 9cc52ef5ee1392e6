package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// legacyMigrations are the migrations of the stores made before the
// schema had one list: three trees, each numbered on its own (postgres/,
// sqlite/ for the main SQLite file, sqlite-telemetry/), so that webhooks
// was postgres 0020 but sqlite 0011. Each change of the list names the
// files it was in those trees, as "tree/NNNN_name.sql"; its SQL there is
// its SQL here, byte for byte. The table is frozen: changes after 0142
// were never numbered the old way.
var legacyMigrations = map[int][]string{
	101: {"postgres/0001_foundation.sql", "sqlite/0001_foundation.sql"},
	102: {"postgres/0002_templates.sql", "sqlite/0002_templates.sql"},
	103: {"postgres/0003_policies.sql", "sqlite/0003_policies.sql"},
	104: {"postgres/0004_layouts.sql", "sqlite/0004_layouts.sql"},
	105: {"postgres/0005_zones.sql", "sqlite/0005_zones.sql"},
	106: {"postgres/0006_login_attempts.sql", "sqlite/0006_login_attempts.sql"},
	107: {"postgres/0007_aps.sql", "sqlite/0007_aps.sql"},
	108: {"postgres/0008_client_events.sql", "sqlite-telemetry/0001_client_events.sql"},
	109: {"postgres/0009_clients.sql", "sqlite-telemetry/0002_clients.sql"},
	110: {"postgres/0010_exports.sql", "sqlite/0008_exports.sql"},
	111: {"postgres/0011_ap_stats.sql", "sqlite-telemetry/0003_ap_stats.sql"},
	112: {"postgres/0012_baselines.sql", "sqlite-telemetry/0004_baselines.sql"},
	113: {"postgres/0013_connlog_index.sql", "sqlite-telemetry/0005_connlog_index.sql"},
	114: {"postgres/0014_stats_unique.sql", "sqlite-telemetry/0006_stats_unique.sql"},
	115: {"postgres/0015_stats_rate_index.sql", "sqlite-telemetry/0007_stats_rate_index.sql"},
	116: {"postgres/0016_day_partitions.sql", "sqlite-telemetry/0008_event_id_per_ts.sql"},
	117: {"postgres/0017_derived_journal.sql", "sqlite-telemetry/0009_derived_journal.sql"},
	118: {"postgres/0018_audit_log.sql", "sqlite/0009_audit_log.sql"},
	119: {"postgres/0019_event_outbox.sql", "sqlite/0010_event_outbox.sql"},
	120: {"postgres/0020_webhooks.sql", "sqlite/0011_webhooks.sql"},
	121: {"postgres/0021_sample_radio_optional.sql", "sqlite-telemetry/0010_sample_radio_optional.sql"},
	122: {"postgres/0022_ap_position.sql", "sqlite/0012_ap_position.sql"},
	123: {"postgres/0023_event_inbox.sql", "sqlite/0013_event_inbox.sql"},
	124: {"postgres/0024_webhook_lease.sql", "sqlite/0014_webhook_lease.sql"},
	125: {"postgres/0025_clients_mac_not_unique.sql"},
	126: {"postgres/0026_cluster_parent_keys.sql", "sqlite/0015_cluster_parent_keys.sql"},
	127: {"postgres/0027_audit_location.sql", "sqlite/0016_audit_location.sql"},
	128: {"postgres/0028_delivery_error_class.sql", "sqlite/0017_delivery_error_class.sql"},
	129: {"sqlite/0018_user_ids_never_reused.sql"},
	130: {"postgres/0029_acct_sessions.sql", "sqlite/0019_acct_sessions.sql"},
	131: {"postgres/0030_slot_index.sql", "sqlite-telemetry/0011_slot_index.sql"},
	132: {"postgres/0031_held_accepts.sql", "sqlite/0020_held_accepts.sql"},
	133: {"postgres/0032_client_ip.sql", "sqlite-telemetry/0012_client_ip.sql"},
	134: {"postgres/0035_audit_changes.sql", "sqlite/0023_audit_changes.sql"},
	135: {"postgres/0037_event_indexes.sql", "sqlite-telemetry/0013_event_indexes.sql"},
	136: {"postgres/0040_slot_clients.sql", "sqlite-telemetry/0015_slot_clients.sql"},
	137: {"postgres/0041_anomaly_rule.sql", "sqlite-telemetry/0016_anomaly_rule.sql"},
	138: {"postgres/0042_incidents.sql", "sqlite/0024_incidents.sql", "sqlite-telemetry/0017_anomalies_raised.sql"},
	139: {"postgres/0043_service_levels.sql", "sqlite/0025_service_level_targets.sql", "sqlite-telemetry/0018_service_levels.sql"},
	140: {"postgres/0047_service_level_backfill.sql", "sqlite-telemetry/0022_service_level_backfill.sql"},
	141: {"postgres/0048_fewer_audit_indexes.sql", "sqlite/0028_fewer_audit_indexes.sql"},
	142: {"postgres/0049_radio_samples.sql", "sqlite-telemetry/0023_radio_samples.sql"},
}

// legacyMigration is one row a store of the old numbering holds in
// schema_migrations, and the number of its change in the list.
type legacyMigration struct {
	version int    // in its tree
	name    string // the file, as the row names it
	change  int
}

// legacyTrees indexes legacyMigrations by tree (pgFile, sqliteFile,
// telemetryFile) and, in each, by the tree's version.
var legacyTrees = sync.OnceValue(func() map[string]map[int]legacyMigration {
	out := map[string]map[int]legacyMigration{}
	for change, paths := range legacyMigrations {
		for _, p := range paths {
			tree, name, _ := strings.Cut(p, "/")
			v, err := strconv.Atoi(name[:4])
			if err != nil {
				panic(p)
			}
			if out[tree] == nil {
				out[tree] = map[int]legacyMigration{}
			}
			out[tree][v] = legacyMigration{version: v, name: name, change: change}
		}
	}
	return out
})

// legacyLatest is the highest version of tree that a binary of the old
// numbering knew.
func legacyLatest(tree string) int {
	latest := 0
	for v := range legacyTrees()[tree] {
		latest = max(latest, v)
	}
	return latest
}

// renumber rewrites, in one transaction, the schema_migrations of a
// database of the old numbering (rows below firstVersion) to the list's
// numbers and names, and leaves any other alone; the migrations then go on
// from there. On PostgreSQL the lock on schema_migrations makes replicas
// that start together take turns, and the ones after the first find
// nothing left to renumber.
//
// It refuses, and changes nothing, a database holding a version its tree
// never had: above the tree's last it is ErrSchemaTooNew (a newer binary of
// the old numbering migrated it); otherwise, or with a name not the one
// its version had, the row was not made by a wnms release. Once renumbered,
// a database holds versions from firstVersion up, above all that a binary
// of the old numbering knows, so such a binary refuses it (ErrSchemaTooNew)
// rather than migrate it again.
func (s *Store) renumber(ctx context.Context, set migrationSet) error {
	return txOn(ctx, set.db, func(tx *sql.Tx) error {
		if err := lockMigrations(ctx, tx, s.dialect); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT version, name FROM schema_migrations ORDER BY version`)
		if err != nil {
			return err
		}
		var old []legacyMigration
		newer := 0 // rows of the list's numbering
		for rows.Next() {
			var m legacyMigration
			if err := rows.Scan(&m.version, &m.name); err != nil {
				rows.Close()
				return err
			}
			if m.version >= firstVersion {
				newer++
				continue
			}
			old = append(old, m)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(old) == 0 {
			return err
		}
		tree := legacyTrees()[set.file]
		if newer > 0 {
			return fmt.Errorf("schema_migrations of the %s database holds versions of both the numbering before %04d and after: no wnms release leaves it so", set.file, firstVersion)
		}
		for _, m := range old {
			known, ok := tree[m.version]
			switch {
			case !ok && m.version > legacyLatest(set.file):
				return fmt.Errorf("%w: schema %d, binary knows %d (in the numbering of %s migrations before %04d)", ErrSchemaTooNew, old[len(old)-1].version, legacyLatest(set.file), set.file, firstVersion)
			case !ok || known.name != m.name:
				return fmt.Errorf("schema_migrations of the %s database holds %d %q, which no wnms release made: nothing was changed", set.file, m.version, m.name)
			}
		}
		for _, m := range old {
			c := tree[m.version].change
			// The list's numbers are all above the old ones, so no row
			// takes a number another still holds.
			if _, err := tx.ExecContext(ctx, `UPDATE schema_migrations SET version = $1, name = $2 WHERE version = $3`,
				c, changeName(c), m.version); err != nil {
				return err
			}
		}
		return nil
	})
}

// changeName is the name of change number v of the list.
func changeName(v int) string {
	return schemaChanges()[v-firstVersion].name
}
