package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/wnms/wnms/internal/baseline"
	"github.com/wnms/wnms/internal/wnms"
)

// The baseline calls: every role reads them, at a location it sees; a
// caller outside the location is refused, another customer's location is
// unknown, and the anomaly list never shows what the caller may not see.
func TestAuthzBaselines(t *testing.T) {
	at := func(path string) func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
		return func(_ *testing.T, _ *authzFixture, tg authzTarget) (string, string, any) {
			return "GET", fmt.Sprintf("%s?locationid=%d", path, tg.Folder.ID.ID), nil
		}
	}
	// markAnomaly records an anomaly of customer 1 on the site's floor,
	// as the store, and returns how the list shows it.
	markAnomaly := func(t *testing.T, f *authzFixture) string {
		slot := wnms.SlotOf(time.Now().Add(-time.Hour).UnixMilli())
		if _, err := f.E.Store.RecordAnomaly(context.Background(), wnms.Anomaly{CustomerID: 1, LocationID: f.Floor.ID.ID,
			Kind: baseline.KindConnectivity, Slot: slot, Observation: 77.5, Baseline: 10, Threshold: 20}); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`"timestamp":%d`, slot)
	}
	runAuthz(t, []authzCase{
		{name: "GET baselines/clientsconnectivity", request: at("/V5/baselines/clientsconnectivity"), allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
		{name: "GET baselines/clientsperformance", request: at("/V5/baselines/clientsperformance"), allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
		{name: "GET baselines/clientdatarate", allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound,
			request: func(_ *testing.T, _ *authzFixture, tg authzTarget) (string, string, any) {
				return "GET", fmt.Sprintf("/V5/baselines/clientdatarate?macaddress=aa:bb:cc:dd:ee:ff&locationid=%d", tg.Folder.ID.ID), nil
			}},
		{name: "GET baselines/clientsconnectivity/failingclients", allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound,
			request: func(_ *testing.T, _ *authzFixture, tg authzTarget) (string, string, any) {
				return "GET", fmt.Sprintf("/V5/baselines/clientsconnectivity/failingclients?timestamp=%d&locationid=%d", time.Now().UnixMilli(), tg.Folder.ID.ID), nil
			}},
		{name: "GET baselines/anomalies", request: at("/V5/baselines/anomalies"), allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
		// Without locationid: another customer's caller, and one scoped to
		// the other folder, never see customer 1's anomaly on the site's
		// floor.
		{name: "GET baselines/anomalies everywhere", allowed: allRoles, ok: http.StatusOK, marker: markAnomaly, scoped: true,
			request: func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
				return "GET", "/V5/baselines/anomalies", nil
			}},
	})
}
