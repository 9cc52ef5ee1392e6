package store

import (
	"context"
	"testing"
)

// The page pool is set aside at the first SQLite open of the process and
// the caches draw from it: reading a file takes slots, and none of its
// pages is allocated one by one.
func TestPageCachePool(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if pagePool.err != nil {
		t.Fatalf("no page pool: %v", pagePool.err)
	}
	var n int
	if err := s.r.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		t.Fatal(err)
	}
	st := PageCache()
	if want := int64(DefaultCacheMiB) << 20; st.PoolBytes < want {
		t.Errorf("pool %d bytes, want at least %d (the default setting)", st.PoolBytes, want)
	}
	if st.UsedBytes <= 0 || st.UsedBytes > st.PoolBytes {
		t.Errorf("pool slots in use: %d bytes of %d, want some after reading the schema", st.UsedBytes, st.PoolBytes)
	}
	if st.OverflowBytes != 0 {
		t.Errorf("%d bytes of pages allocated outside the pool, want 0", st.OverflowBytes)
	}
}
