package main

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"testing"
)

// askAs sends GET url with the Host header host and returns the status
// and, for an error, its errorCode and moreInfo.
func askAs(t *testing.T, url, host string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Host = host
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Errors []struct{ ErrorCode, MoreInfo string }
		Data   []struct{ ErrorCode string }
	}
	json.Unmarshal(b, &e)
	switch {
	case len(e.Errors) > 0:
		return resp.StatusCode, e.Errors[0].ErrorCode + " " + e.Errors[0].MoreInfo
	case len(e.Data) > 0:
		return resp.StatusCode, e.Data[0].ErrorCode
	}
	return resp.StatusCode, ""
}

// A listener on loopback answers only to IP addresses, localhost and the
// names it was given: a page whose own name an attacker made resolve to
// 127.0.0.1 (DNS rebinding) cannot reach the console or the API through
// the user's browser. Before, any Host was served.
func TestServeRefusesRebindingHostNames(t *testing.T) {
	l, _, _, _ := bootServe(t, nil, "--data", t.TempDir(), "--allowed-hosts", "wnms.example.com, .corp.example",
		"--server-url", "https://nms.example.org:8443/")
	_, port, _ := net.SplitHostPort(l.API)
	for _, c := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, 200}, {"localhost:" + port, 200}, {"LOCALHOST.", 200}, {"[::1]:" + port, 200}, {"", 200},
		{"wnms.example.com", 200}, {"WNMS.example.com:" + port, 200}, {"ap.corp.example", 200}, {"nms.example.org", 200},
		{"attacker.example:" + port, 400}, {"corp.example.evil", 400}, {"wnms.example.com.evil", 400}, {"localhost.attacker.example", 400},
	} {
		for _, url := range []string{"http://" + l.API + "/", "http://" + l.API + "/new/webservice/V7/system/version",
			"http://" + l.API + "/healthz", "http://" + l.Analytics + "/healthz"} {
			status, code := askAs(t, url, c.host)
			if status != c.want {
				t.Errorf("Host %q on %s: %d %s, want %d", c.host, url, status, code, c.want)
			}
			if c.want == 400 && url != "http://"+l.Analytics+"/healthz" && code != "INVALID_PARAMETER Host" {
				t.Errorf("Host %q on %s: %s, want INVALID_PARAMETER naming Host", c.host, url, code)
			}
		}
	}

	// Without --allowed-hosts: a loopback listener answers to addresses
	// and localhost only; one on every address, to any name.
	l, _, _, _ = bootServe(t, nil, "--data", t.TempDir())
	if status, _ := askAs(t, "http://"+l.API+"/healthz", "rebind.attacker.example"); status != 400 {
		t.Errorf("a loopback listener served a foreign name: %d", status)
	}
	if status, _ := askAs(t, "http://"+l.API+"/healthz", "localhost"); status != 200 {
		t.Errorf("a loopback listener refused localhost: %d", status)
	}
	l, _, _, _ = bootServe(t, nil, "--data", t.TempDir(), "--listen", "0.0.0.0:0")
	_, port, _ = net.SplitHostPort(l.API)
	if status, _ := askAs(t, "http://127.0.0.1:"+port+"/healthz", "wnms.anything.example"); status != 200 {
		t.Errorf("a listener on every address refused a name with no --allowed-hosts: %d", status)
	}
}
