package apitest

import (
	"net/http"
	"testing"
)

// TestValidatorListeners shows that the validator judges each answer by the
// listener that gave it: an error nobody documents must be that listener's
// envelope, and a path resolves only among that listener's calls.
func TestValidatorListeners(t *testing.T) {
	v, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	json := http.Header{"Content-Type": []string{"application/json"}}
	mainErr := []byte(`{"status":404,"errors":[{"errorCode":"RESOURCE_NOT_FOUND","message":"no such path","moreInfo":""}]}`)
	anErr := []byte(`{"success":false,"message":"no such path","data":[{"errorCode":"RESOURCE_NOT_FOUND","message":"no such path"}]}`)
	zones := "/api/v1.14/analytics/graphs/locationtracking/zones/ap/config"
	for _, tc := range []struct {
		name     string
		l        Listener
		method   string
		path     string
		status   int
		body     []byte
		wantPass bool
	}{
		{"main 404 in the main envelope", MainListener, "GET", "/new/webservice/V5/nothing", 404, mainErr, true},
		{"main 404 in the analytics envelope", MainListener, "GET", "/new/webservice/V5/nothing", 404, anErr, false},
		{"analytics 404 in the analytics envelope", AnalyticsListener, "GET", "/api/v1.14/nothing", 404, anErr, true},
		{"analytics 404 in the main envelope", AnalyticsListener, "GET", "/api/v1.14/nothing", 404, mainErr, false},
		{"analytics 405 in the analytics envelope", AnalyticsListener, "POST", zones, 405, anErr, true},
		{"analytics 405 in the main envelope", AnalyticsListener, "POST", zones, 405, mainErr, false},
		{"analytics 500 in the main envelope", AnalyticsListener, "DELETE", zones, 500, mainErr, false},
		{"an analytics path asked of the main listener is a main 404", MainListener, "GET", zones, 404, mainErr, true},
		{"a main path asked of the analytics listener is an analytics 404", AnalyticsListener, "GET", "/V5/users", 404, anErr, true},
		{"documented analytics 401 in the main envelope", AnalyticsListener, "GET", zones, 401,
			[]byte(`{"status":401,"errors":[{"errorCode":"SESSION_REQUIRED","message":"log in","moreInfo":""}]}`), false},
		{"an error code that does not exist", MainListener, "GET", "/new/webservice/V5/nothing", 404,
			[]byte(`{"status":404,"errors":[{"errorCode":"NOPE","message":"x","moreInfo":""}]}`), false},
		{"an unknown field in the error body", MainListener, "GET", "/new/webservice/V5/nothing", 404,
			[]byte(`{"status":404,"errors":[{"errorCode":"RESOURCE_NOT_FOUND","message":"x","moreInfo":""}],"extra":1}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.CheckResponseOn(tc.l, tc.method, tc.path, tc.status, json, tc.body)
			if tc.wantPass && err != nil {
				t.Errorf("rejected: %v", err)
			}
			if !tc.wantPass && err == nil {
				t.Errorf("accepted %s", tc.body)
			}
		})
	}
}
