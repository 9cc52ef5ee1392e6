package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// basePath is where a wnms server answers its API.
const basePath = "/new/webservice"

// ErrNotWnms says the URL is not a wnms server.
var ErrNotWnms = errors.New("not a wnms server")

// ErrKeyRefused says the server refused the API key.
var ErrKeyRefused = errors.New("the server refused the API key")

// ErrUnreachable says nothing answered at the URL on the first contact
// (the connection was refused, the name does not resolve, ...): most
// likely a wrong --url, not a server that went away, so it is not waited
// for.
var ErrUnreachable = errors.New("no server answers")

// API is a session with a wnms server over its public HTTP API. Calls
// that fail for want of the server (it cannot be reached, or answers 5xx,
// 429 or 408) are retried with growing pauses for up to RetryFor, once
// the server has answered at all (before that, ErrUnreachable ends the
// run at once); a session that ended is opened again.
type API struct {
	URL              string // http://host:port
	KeyID, KeyValue  string
	HTTP             *http.Client
	RetryFor         time.Duration
	OnRetry          func(err error, wait time.Duration)
	session          string
	firstPause, most time.Duration
	answered         atomic.Bool // the server has answered once
}

// apiError is an answer of the server with its error body.
type apiError struct {
	Status        int
	Code, Message string
}

func (e *apiError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// transient says whether err may go away by itself.
func transient(err error) bool {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status >= 500 || ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusRequestTimeout
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!errors.Is(err, ErrNotWnms) && !errors.Is(err, ErrKeyRefused) && !errors.Is(err, ErrUnreachable)
}

// once makes one request; out, when not nil, takes a 2xx JSON answer.
func (a *API) once(ctx context.Context, method, path, ctype string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(a.URL, "/")+basePath+path, rd)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if a.session != "" {
		req.AddCookie(&http.Cookie{Name: "JSESSIONID", Value: a.session})
	}
	hc := a.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		if !a.answered.Load() && ctx.Err() == nil {
			return fmt.Errorf("%w at %s: %w", ErrUnreachable, a.URL, err)
		}
		return err
	}
	a.answered.Store(true)
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &apiError{Status: resp.StatusCode}
		var body struct {
			Errors []struct {
				Code    string `json:"errorCode"`
				Message string `json:"message"`
			} `json:"errors"`
		}
		if json.Unmarshal(data, &body) == nil && len(body.Errors) > 0 {
			e.Code, e.Message = body.Errors[0].Code, body.Errors[0].Message
		}
		return e
	}
	for _, c := range resp.Cookies() {
		if c.Name == "JSESSIONID" && c.Value != "" {
			a.session = c.Value
		}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
		}
	}
	return nil
}

// retry runs f until it succeeds, fails for good, or RetryFor has passed
// since the first failure.
func (a *API) retry(ctx context.Context, f func() error) error {
	pause, most := a.firstPause, a.most
	if pause == 0 {
		pause, most = 250*time.Millisecond, 15*time.Second
	}
	var since time.Time
	for {
		err := f()
		if err == nil || !transient(err) {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		}
		if time.Since(since) > a.RetryFor {
			return fmt.Errorf("gave up after %s: %w", a.RetryFor, err)
		}
		if a.OnRetry != nil {
			a.OnRetry(err, pause)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, most)
	}
}

// Check makes sure the URL is a wnms server: its OpenAPI document, which
// every wnms serves without a session, names it.
func (a *API) Check(ctx context.Context) error {
	return a.retry(ctx, func() error {
		var doc struct {
			Info struct {
				Title string `json:"title"`
			} `json:"info"`
		}
		err := a.once(ctx, http.MethodGet, "/V5/openapi.json", "", nil, &doc)
		var ae *apiError
		switch {
		case errors.As(err, &ae) && !transient(err), err != nil && strings.Contains(err.Error(), "not the JSON expected"):
			return fmt.Errorf("%w: %s does not serve the wnms API (%v)", ErrNotWnms, a.URL, err)
		case err != nil:
			return err
		case doc.Info.Title != "wnms":
			return fmt.Errorf("%w: %s serves an API called %q", ErrNotWnms, a.URL, doc.Info.Title)
		}
		return nil
	})
}

// Login opens a session with the key.
func (a *API) Login(ctx context.Context) error {
	body, _ := json.Marshal(map[string]string{"type": "apikeycredentials", "keyId": a.KeyID, "keyValue": a.KeyValue})
	return a.retry(ctx, func() error {
		a.session = ""
		err := a.once(ctx, http.MethodPost, "/login/key/wnms-simulator/86400", "application/json", body, nil)
		var ae *apiError
		if errors.As(err, &ae) && (ae.Status == http.StatusUnauthorized || ae.Status == http.StatusForbidden || ae.Status == http.StatusBadRequest) {
			return fmt.Errorf("%w: %s", ErrKeyRefused, ae.Message)
		}
		return err
	})
}

// Call makes a call in the session, logging in again when the session
// ended (a restarted server keeps sessions, but they expire).
func (a *API) Call(ctx context.Context, method, path, ctype string, body []byte, out any) error {
	return a.retry(ctx, func() error {
		err := a.once(ctx, method, path, ctype, body, out)
		var ae *apiError
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			if err := a.Login(ctx); err != nil {
				return err
			}
			return a.once(ctx, method, path, ctype, body, out)
		}
		return err
	})
}

// JSON makes a call with a JSON body (nil: none).
func (a *API) JSON(ctx context.Context, method, path string, in, out any) error {
	if in == nil {
		return a.Call(ctx, method, path, "", nil, out)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return a.Call(ctx, method, path, "application/json", b, out)
}

// IngestResult is the answer of an ingest call.
type IngestResult struct {
	Accepted   int `json:"accepted"`
	Duplicates int `json:"duplicates"`
	Rejected   []struct {
		Index     int    `json:"index"`
		ErrorCode string `json:"errorCode"`
		Message   string `json:"message"`
	} `json:"rejected"`
}

// Ingest sends records as NDJSON to /V5/ingest/{kind}.
func Ingest[T any](ctx context.Context, a *API, kind string, recs []T) (IngestResult, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for i := range recs {
		if err := enc.Encode(&recs[i]); err != nil {
			return IngestResult{}, err
		}
	}
	var res IngestResult
	err := a.Call(ctx, http.MethodPost, "/V5/ingest/"+kind, "application/x-ndjson", buf.Bytes(), &res)
	return res, err
}
