// Package apitest boots the real wnms server in-process over a real store
// for tests: SQLite always, PostgreSQL when WNMS_TEST_DATABASE_URL is set
// (and required when WNMS_TEST_REQUIRE_POSTGRES=1, as in CI). Every
// response a test client receives is checked against the OpenAPI document.
package apitest

import (
	"testing"

	"github.com/wnms/wnms/internal/store"
	"github.com/wnms/wnms/internal/store/storetest"
)

// Backend names a store engine under test.
type Backend = storetest.Backend

// The backends.
const (
	SQLite   = storetest.SQLite
	Postgres = storetest.Postgres
)

// Backends returns the engines to run a test against (storetest.Backends).
func Backends(t testing.TB) []Backend { return storetest.Backends(t) }

// ForEachBackend runs f as a subtest per backend.
func ForEachBackend(t *testing.T, f func(t *testing.T, b Backend)) { storetest.ForEachBackend(t, f) }

// StoreConfig returns a config for a fresh, empty store of backend b
// (storetest.StoreConfig).
func StoreConfig(t testing.TB, b Backend) store.Config { return storetest.StoreConfig(t, b) }

// OpenStore opens a fresh migrated store of backend b.
func OpenStore(t testing.TB, b Backend) *store.Store { return storetest.OpenStore(t, b) }

// OpenStoreAt opens a second handle on the store that cfg names, as a
// second replica would.
func OpenStoreAt(t testing.TB, cfg store.Config) *store.Store { return storetest.OpenStoreAt(t, cfg) }
