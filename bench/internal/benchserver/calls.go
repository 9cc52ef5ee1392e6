package benchserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// Post sends body as JSON to u with the session cookie and returns the
// answer's body; any status but 200 is an error.
func Post(c *http.Client, u, cookie string, body []byte) ([]byte, error) {
	return Send(c, "POST", u, cookie, body)
}

// Send is Post with another method (PUT).
func Send(c *http.Client, method, u, cookie string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return do(c, req, cookie)
}

// Get reads u with the session cookie and returns the answer's body; any
// status but 200 is an error.
func Get(c *http.Client, u, cookie string) ([]byte, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return nil, err
	}
	return do(c, req, cookie)
}

func do(c *http.Client, req *http.Request, cookie string) ([]byte, error) {
	if cookie != "" {
		req.Header.Set("Cookie", "JSESSIONID="+cookie)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s: %s %.300s", req.Method, req.URL, resp.Status, b)
	}
	return b, err
}

// ProcStatus reads a field of /proc/PID/status (VmRSS, VmHWM); pid 0 is
// this process. It answers "?" where there is no such file.
func ProcStatus(pid int, field string) string {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			return strings.TrimSpace(strings.TrimPrefix(l, field+":"))
		}
	}
	return "?"
}
