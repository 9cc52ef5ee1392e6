package datasource

import (
	"fmt"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/wnms"
)

// A source's unmatched BSSIDs, NAS-Identifiers and addresses are kept
// per id with their count and last time, at most maxUnmatched of them,
// the least recently seen forgotten first, and listed newest first.
func TestStatusUnmatchedBounded(t *testing.T) {
	b := &Bridge{}
	b.init()
	e := &entry{customer: 1, src: wnms.DataSource{Name: "lab", LocationID: wnms.LocalID(5)}}
	t0 := time.UnixMilli(1_800_000_000_000)
	for i := range maxUnmatched + 44 {
		b.noAP(e, fmt.Sprintf("02:99:00:00:%02X:%02X", i/256, i%256), "", "", t0.Add(time.Duration(i)*time.Second))
	}
	// One seen again is the newest, counted twice.
	b.noAP(e, "02:99:00:00:00:FF", "", "", t0.Add(time.Hour))
	st := b.Status(1, []wnms.DataSource{e.src}, false, t0.Add(time.Hour))
	got := st.Sources[0].Unmatched
	if len(got) != maxUnmatched {
		t.Fatalf("%d unmatched kept, want %d", len(got), maxUnmatched)
	}
	if got[0].BSSID != "02:99:00:00:00:FF" || got[0].Records != 2 || got[0].LastSeen != t0.Add(time.Hour).UnixMilli() {
		t.Errorf("newest: %+v", got[0])
	}
	for i := 1; i < len(got); i++ {
		if got[i].LastSeen > got[i-1].LastSeen {
			t.Fatalf("not newest first at %d: %+v then %+v", i, got[i-1], got[i])
		}
	}
	// The 44 oldest are gone: the oldest kept is number 44.
	if last := got[len(got)-1]; last.BSSID != "02:99:00:00:00:2C" {
		t.Errorf("oldest kept: %+v", last)
	}
	if st.Sources[0].State != wnms.StateIdle || st.Sources[0].LastPacket != nil {
		t.Errorf("a source that sent nothing: %+v", st.Sources[0])
	}
}
