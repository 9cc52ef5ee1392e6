package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/wnms/wnms/internal/wnms"
)

// The service level calls: every role reads them, only SU and AD set
// targets; a caller outside the location is refused, another customer's
// location is unknown, for every call.
func TestAuthzServiceLevels(t *testing.T) {
	at := func(method, path string, body any) func(*testing.T, *authzFixture, authzTarget) (string, string, any) {
		return func(_ *testing.T, _ *authzFixture, tg authzTarget) (string, string, any) {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			return method, fmt.Sprintf("%s%slocationid=%d", path, sep, tg.Folder.ID.ID), body
		}
	}
	targets := map[string]any{"successfulConnects": map[string]any{"goal": 99}, "timeToConnect": map[string]any{"seconds": 2.5, "goal": 80}}
	runAuthz(t, []authzCase{
		{name: "GET servicelevels", request: at("GET", "/V5/servicelevels", nil), allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
		{name: "GET servicelevels grouped", request: at("GET", "/V5/servicelevels?groupby=ap", nil), allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
		{name: "GET servicelevels/targets", request: at("GET", "/V5/servicelevels/targets", nil), allowed: allRoles, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
		{name: "PUT servicelevels/targets", request: at("PUT", "/V5/servicelevels/targets", targets), allowed: adUp, ok: http.StatusOK,
			location: true, foreign: http.StatusNotFound, foreignCode: wnms.ResourceNotFound},
	})
}
