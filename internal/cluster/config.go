// Package cluster makes a wnms server the parent of child servers: it
// logs into each child with an API key, keeps those sessions alive, and
// forwards the calls that name a child with nodeid, after authorizing them
// for the caller as if they were local.
package cluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"
)

// Config is the cluster file:
//
//	{"children": [{"childId": 1, "name": "Campus A", "url": "http://10.0.0.5:8080",
//	  "keyId": "...", "keyValue": "...", "analyticsUrl": "http://10.0.0.5:8081", "timeoutSeconds": 10}]}
type Config struct {
	Children []ChildConfig `json:"children"`
}

// ChildConfig is one child server.
type ChildConfig struct {
	ChildID  int64  `json:"childId"`
	Name     string `json:"name"`
	URL      string `json:"url"`
	KeyID    string `json:"keyId"`
	KeyValue string `json:"keyValue"`
	// AnalyticsURL is the child's analytics listener, where analytics
	// calls with the child's server_id go (optional).
	AnalyticsURL string `json:"analyticsUrl,omitempty"`
	// TimeoutSeconds bounds each call to the child (default 10).
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
}

// DefaultTimeout is a child's call timeout when its entry sets none.
const DefaultTimeout = 10 * time.Second

// MaxChildren is the most children one parent takes.
const MaxChildren = 256

// Timeout is the child's call timeout.
func (c ChildConfig) Timeout() time.Duration {
	if c.TimeoutSeconds > 0 {
		return time.Duration(c.TimeoutSeconds) * time.Second
	}
	return DefaultTimeout
}

// String names the child for messages and logs; it never shows the key.
func (c ChildConfig) String() string {
	if c.Name != "" {
		return fmt.Sprintf("child %d (%s)", c.ChildID, c.Name)
	}
	return fmt.Sprintf("child %d", c.ChildID)
}

// LoadConfig reads and checks a cluster file. Its errors name the file and
// the line (for JSON that does not parse) or the child at fault, and never
// show a key value.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cluster config: %w", err)
	}
	cfg, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("cluster config %s: %w", path, err)
	}
	return cfg, nil
}

// ParseConfig reads and checks the JSON of a cluster file.
func ParseConfig(b []byte) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cfg Config
	if err := dec.Decode(&cfg); err != nil {
		return nil, jsonError(b, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("not one JSON object: something follows it")
	}
	if len(cfg.Children) > MaxChildren {
		return nil, fmt.Errorf("%d children: at most %d", len(cfg.Children), MaxChildren)
	}
	seen := map[int64]bool{}
	for i, c := range cfg.Children {
		at := fmt.Sprintf("children[%d]", i)
		if c.ChildID <= 0 {
			return nil, fmt.Errorf("%s: childId must be a positive integer, not %d", at, c.ChildID)
		}
		at = fmt.Sprintf("children[%d], %s", i, c)
		if seen[c.ChildID] {
			return nil, fmt.Errorf("%s: childId %d appears twice", at, c.ChildID)
		}
		seen[c.ChildID] = true
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("%s: url must be http(s)://host:port of the child, not %q", at, c.URL)
		}
		cfg.Children[i].URL = strings.TrimSuffix(c.URL, "/")
		if c.AnalyticsURL != "" {
			u, err := url.Parse(c.AnalyticsURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
				u.RawQuery != "" || u.User != nil {
				return nil, fmt.Errorf("%s: analyticsUrl must be http(s)://host:port of the child's analytics listener, not %q", at, c.AnalyticsURL)
			}
			cfg.Children[i].AnalyticsURL = strings.TrimSuffix(c.AnalyticsURL, "/")
		}
		if c.KeyID == "" || c.KeyValue == "" {
			return nil, fmt.Errorf("%s: keyId and keyValue are required (an API key of a SUPERUSER on the child)", at)
		}
		if c.TimeoutSeconds < 0 || c.TimeoutSeconds > 300 {
			return nil, fmt.Errorf("%s: timeoutSeconds must be 1 to 300", at)
		}
	}
	return &cfg, nil
}

// jsonError says where JSON went wrong, by line and column.
func jsonError(b []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("not JSON: the file ends before the object does")
	}
	if off < 0 {
		return fmt.Errorf("not a cluster file: %v", err)
	}
	line, col := 1, 1
	for _, c := range b[:min(int(off), len(b))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Errorf("line %d, column %d: %v", line, col, err)
}

// CheckServerID refuses a configuration that gives a child the parent's
// own serverID (analytics calls tell servers apart by it).
func (c *Config) CheckServerID(own int64) error {
	for _, ch := range c.Children {
		if ch.ChildID == own {
			return fmt.Errorf("%s has this server's serverID %d; give the parent another --server-id", ch, own)
		}
	}
	return nil
}
