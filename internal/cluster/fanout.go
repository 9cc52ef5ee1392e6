package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// Fan-out: a session opened with getClusterChildrenData=true makes list
// calls answer for the parent and every child at once. The parent's own
// answer decides the shape; each child answers the same call with the
// parent's session, concurrently, and the answers merge:
//
//   - a JSON array: the parent's items, then each child's in child order;
//   - a paged wrapper (an object with totalCount and one list): the lists
//     concatenated, totalCount summed, a link kept when any server has one;
//   - the location tree: each child's tree under the parent's root.
//
// A child's location ids become {"type":"remotelocationid","id":N,
// "childId":C}. A child that fails fails the whole call (502 or 504
// naming it): an answer is never silently partial. Other answers (one
// resource, an error) are the parent's own.

// recorder keeps a local answer for merging.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(s int) {
	if r.status == 0 {
		r.status = s
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

func (r *recorder) copyTo(w http.ResponseWriter) {
	for k, v := range r.header {
		w.Header()[k] = v
	}
	w.WriteHeader(r.status)
	w.Write(r.body.Bytes())
}

// shape is what kind of list an answer is.
type shape int

const (
	notAList shape = iota
	array
	paged
	tree
)

func shapeOf(v any) (shape, string) {
	switch x := v.(type) {
	case []any:
		return array, ""
	case map[string]any:
		if _, ok := x["rootLocationId"]; ok {
			if _, ok := x["locations"].(map[string]any); ok {
				return tree, ""
			}
		}
		if _, ok := x["totalCount"].(json.Number); !ok {
			return notAList, ""
		}
		list := ""
		for k, f := range x {
			if _, ok := f.([]any); ok {
				if list != "" {
					return notAList, ""
				}
				list = k
			}
		}
		if list != "" {
			return paged, list
		}
	}
	return notAList, ""
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// fanOut answers call for the parent and every child.
func (c *Cluster) fanOut(w http.ResponseWriter, r *http.Request, call httpkit.Call) error {
	rec := &recorder{header: http.Header{}}
	if err := call.Serve(rec, r); err != nil {
		return err
	}
	if rec.status != http.StatusOK {
		rec.copyTo(w)
		return nil
	}
	local, err := decode(rec.body.Bytes())
	if err != nil {
		rec.copyTo(w)
		return nil
	}
	kind, list := shapeOf(local)
	if kind == notAList {
		rec.copyTo(w)
		return nil
	}
	if err := originForm(r); err != nil {
		return err
	}
	if err := access.ReachChildren(wnms.CallerFrom(r.Context())); err != nil {
		return err
	}
	header := c.forwardHeader(r)
	header.Set("Accept", "application/json")
	children := c.all()
	answers := make([]any, len(children))
	errs := make([]error, len(children))
	target, _, _ := strings.Cut(r.RequestURI, "?")
	if q := r.URL.RawQuery; q != "" {
		target += "?" + q
	}
	var wg sync.WaitGroup
	for i, ch := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = c.childAnswer(r.Context(), ch, target, header, kind, list)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	merged, total := merge(local, kind, list, children, answers)
	if total >= 0 && rec.header.Get("X-Total-Count") != "" {
		w.Header().Set("X-Total-Count", strconv.Itoa(total))
	}
	w.Header().Set("Content-Type", "application/json")
	b, err := json.Marshal(merged)
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

// childAnswer makes the call on one child and checks that its answer has
// the parent's shape.
func (c *Cluster) childAnswer(ctx context.Context, ch *child, target string, header http.Header, kind shape, list string) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, ch.cfg.Timeout())
	defer cancel()
	start := time.Now()
	resp, err := ch.do(ctx, http.MethodGet, target, header, nil)
	var body []byte
	if err == nil {
		defer resp.Body.Close()
		body, err = c.readAnswer(ch, resp.Body)
	}
	c.observe(ch, time.Since(start))
	if err == errTooLarge {
		return nil, wnms.Errorf(wnms.ChildUnreachable, "%s: answer larger than %d MiB", ch.cfg, MaxAnswer>>20)
	}
	if err != nil {
		ch.setState(err)
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			c.count(ch, "timeout")
			return nil, wnms.Errorf(wnms.ChildTimeout, "%s did not answer within %s", ch.cfg, ch.cfg.Timeout())
		}
		c.count(ch, "unreachable")
		return nil, wnms.Errorf(wnms.ChildUnreachable, "%s could not be reached", ch.cfg)
	}
	ch.setState(nil)
	if resp.StatusCode != http.StatusOK {
		c.count(ch, "bad_answer")
		return nil, wnms.Errorf(wnms.ChildUnreachable, "%s answered %d to a call this server answered", ch.cfg, resp.StatusCode)
	}
	v, err := decode(body)
	if k, l := shapeOf(v); err != nil || k != kind || l != list || !wellFormed(v, kind, list) {
		c.count(ch, "bad_answer")
		return nil, wnms.Errorf(wnms.ChildUnreachable, "%s answered something that is not the list this call returns", ch.cfg)
	}
	c.count(ch, "ok")
	return remote(v, ch.cfg.ChildID), nil
}

// wellFormed checks what merge relies on beyond the shape: a paged
// answer's list is an array, and every entry of a location tree is an
// object with an id.
func wellFormed(v any, kind shape, list string) bool {
	switch kind {
	case paged:
		_, ok := v.(map[string]any)[list].([]any)
		return ok
	case tree:
		locs, ok := v.(map[string]any)["locations"].(map[string]any)
		if !ok {
			return false
		}
		for _, l := range locs {
			loc, ok := l.(map[string]any)
			if !ok {
				return false
			}
			if _, ok := loc["id"].(map[string]any); !ok {
				return false
			}
		}
	}
	return true
}

// remote turns a child's local location ids into remote ones.
func remote(v any, childID int64) any {
	switch x := v.(type) {
	case map[string]any:
		if t, ok := x["type"].(string); ok && strings.EqualFold(t, wnms.LocalLocationID) && len(x) == 2 {
			if id, ok := x["id"].(json.Number); ok {
				return map[string]any{"type": wnms.RemoteLocationID, "id": id, "childId": childID}
			}
		}
		for k, f := range x {
			x[k] = remote(f, childID)
		}
	case []any:
		for i, f := range x {
			x[i] = remote(f, childID)
		}
	}
	return v
}

// merge joins the answers; total is the summed totalCount (or the summed
// length of arrays), -1 when there is none.
func merge(local any, kind shape, list string, children []*child, answers []any) (any, int) {
	switch kind {
	case array:
		out := local.([]any)
		for _, a := range answers {
			out = append(out, a.([]any)...)
		}
		return out, len(out)
	case paged:
		out := local.(map[string]any)
		total, ok := count(out["totalCount"])
		for _, a := range answers {
			m := a.(map[string]any)
			out[list] = append(out[list].([]any), m[list].([]any)...)
			if n, good := count(m["totalCount"]); good && ok {
				total += n
			} else {
				ok = false
			}
			for _, link := range []string{"previousLink", "nextLink"} {
				if out[link] == nil && m[link] != nil {
					out[link] = m[link]
				}
			}
		}
		if !ok {
			return out, -1
		}
		out["totalCount"] = total
		return out, total
	default: // tree
		out := local.(map[string]any)
		locs := out["locations"].(map[string]any)
		rootKey := key(out["rootLocationId"])
		root, _ := locs[rootKey].(map[string]any)
		for i, a := range answers {
			m := a.(map[string]any)
			childRoot := key(m["rootLocationId"])
			for k, l := range m["locations"].(map[string]any) {
				loc := l.(map[string]any)
				k = key(loc["id"])
				if k == childRoot {
					loc["parentId"] = out["rootLocationId"]
					if n := children[i].cfg.Name; n != "" {
						loc["name"] = n
					}
					if root != nil {
						kids, _ := root["children"].([]any)
						root["children"] = append(kids, loc["id"])
					}
				}
				locs[k] = loc
			}
		}
		return out, -1
	}
}

func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return int(i), err == nil && i >= 0
}

// key is the tree's map key of a location id: its compact JSON, fields in
// the order type, id, childId.
func key(v any) string {
	m, _ := v.(map[string]any)
	var b strings.Builder
	t, _ := json.Marshal(m["type"])
	b.WriteString(`{"type":` + string(t) + `,"id":` + fmt.Sprint(m["id"]))
	if c, ok := m["childId"]; ok {
		b.WriteString(`,"childId":` + fmt.Sprint(c))
	}
	b.WriteString("}")
	return b.String()
}
