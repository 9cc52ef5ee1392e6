package apitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/wnms/wnms/openapi"
)

// Listener names the listener that answered a request: the main listener
// (the interface under /new/webservice and the operational endpoints) or
// the analytics listener (/api/v1.N). Each has its own error envelope.
type Listener int

// The listeners.
const (
	MainListener Listener = iota
	AnalyticsListener
)

// listenerOf is the listener a documented path key belongs to.
func listenerOf(key string) Listener {
	if strings.HasPrefix(key, "/api/") {
		return AnalyticsListener
	}
	return MainListener
}

// errorSchema is the error envelope of each listener.
var errorSchema = map[Listener]string{
	MainListener:      "/components/schemas/Error",
	AnalyticsListener: "/components/schemas/AnalyticsError",
}

// Validator checks requests and responses against the OpenAPI document.
type Validator struct {
	doc      map[string]any
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	schemas  map[string]*jsonschema.Schema
	keys     [][]string // path keys split into segments
	rawKeys  []string
	listener []Listener // of each key
}

var (
	validatorOnce sync.Once
	validator     *Validator
	validatorErr  error
)

// OpenAPI returns the shared validator of the embedded document.
func OpenAPI() (*Validator, error) {
	validatorOnce.Do(func() { validator, validatorErr = newValidator() })
	return validator, validatorErr
}

const docURL = "file:///openapi.json"

func newValidator() (*Validator, error) {
	b, err := openapi.Document()
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(docURL, inst); err != nil {
		return nil, err
	}
	v := &Validator{doc: doc, compiler: c, schemas: map[string]*jsonschema.Schema{}}
	paths, _ := doc["paths"].(map[string]any)
	for k := range paths {
		v.rawKeys = append(v.rawKeys, k)
		v.keys = append(v.keys, strings.Split(strings.Trim(k, "/"), "/"))
		v.listener = append(v.listener, listenerOf(k))
	}
	return v, nil
}

// Paths returns the path keys of the document.
func (v *Validator) Paths() []string { return append([]string(nil), v.rawKeys...) }

// Operation reports whether the document has method on the path key.
func (v *Validator) Operation(key, method string) bool {
	p, _ := v.doc["paths"].(map[string]any)[key].(map[string]any)
	_, ok := p[strings.ToLower(method)]
	return ok
}

func isVersionSeg(s string) bool {
	if len(s) == 2 && (s[0] == 'v' || s[0] == 'V') && s[1] >= '1' && s[1] <= '7' {
		return true
	}
	ls := strings.ToLower(s)
	return strings.HasPrefix(ls, "v1.") && len(ls) > 3
}

// Match finds the main listener's path key for a request path (with or
// without the base path /new/webservice). Version segments match any
// version; the key with the most literal segments wins.
func (v *Validator) Match(path string) (string, bool) { return v.MatchOn(MainListener, path) }

// MatchOn is Match for the paths of listener l. The operational endpoints
// (/healthz) are documented once and match on either listener.
func (v *Validator) MatchOn(l Listener, path string) (string, bool) {
	for strings.Contains(path, "//") { // the listeners read repeated slashes as one
		path = strings.ReplaceAll(path, "//", "/")
	}
	if l == MainListener {
		path = strings.TrimPrefix(path, "/new/webservice")
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if key, ok := v.match(l, segs); ok {
		return key, true
	}
	// Unversioned calls (login, logout) are also sent with a version.
	if l == MainListener && len(segs) > 1 && isVersionSeg(segs[0]) {
		return v.match(l, segs[1:])
	}
	return "", false
}

func (v *Validator) match(l Listener, segs []string) (string, bool) {
	best, bestScore := -1, -1
	for i, k := range v.keys {
		if len(k) != len(segs) || (v.listener[i] != l && v.rawKeys[i] != "/healthz") {
			continue
		}
		score, ok := 0, true
		for j, ks := range k {
			switch {
			case strings.HasPrefix(ks, "{") && strings.HasSuffix(ks, "}"):
				ok = ok && segs[j] != ""
			case isVersionSeg(ks) && isVersionSeg(segs[j]):
				score++
			case ks == segs[j]:
				score += 2
			default:
				ok = false
			}
		}
		if ok && score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return "", false
	}
	return v.rawKeys[best], true
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func (v *Validator) schema(ptr string) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.schemas[ptr]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(docURL + "#" + ptr)
	if err != nil {
		return nil, err
	}
	v.schemas[ptr] = s
	return s, nil
}

// resolve follows a local $ref of a non-schema object (a response or a
// request body), returning the object and its JSON pointer.
func (v *Validator) resolve(obj map[string]any, ptr string) (map[string]any, string) {
	for i := 0; i < 5; i++ {
		ref, ok := obj["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return obj, ptr
		}
		ptr = strings.TrimPrefix(ref, "#")
		var cur any = v.doc
		for _, p := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
			p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		next, _ := cur.(map[string]any)
		if next == nil {
			return nil, ptr
		}
		obj = next
	}
	return obj, ptr
}

// CheckResponse validates a response of the main listener to method on
// path against the document: the status must be documented, and the body
// must match the schema of that status (or be empty when the response has
// no content).
func (v *Validator) CheckResponse(method, path string, status int, header http.Header, body []byte) error {
	return v.CheckResponseOn(MainListener, method, path, status, header, body)
}

// CheckResponseOn is CheckResponse for a response of listener l: paths
// resolve among that listener's calls, and an answer that no call
// documents (404, 405, 500 of the listener itself) must be that listener's
// error envelope.
func (v *Validator) CheckResponseOn(l Listener, method, path string, status int, header http.Header, body []byte) error {
	key, ok := v.MatchOn(l, path)
	if !ok {
		if status == http.StatusNotFound {
			return v.checkError(l, status, body)
		}
		return fmt.Errorf("openapi: no path of the %s listener matches %s", l, path)
	}
	opPtr := "/paths/" + escape(key) + "/" + strings.ToLower(method)
	op, _ := v.doc["paths"].(map[string]any)[key].(map[string]any)[strings.ToLower(method)].(map[string]any)
	if op == nil {
		if status == http.StatusMethodNotAllowed || status == http.StatusNotFound {
			return v.checkError(l, status, body)
		}
		return fmt.Errorf("openapi: %s %s (%s) is not documented", method, key, path)
	}
	responses, _ := op["responses"].(map[string]any)
	code := fmt.Sprint(status)
	resp, _ := responses[code].(map[string]any)
	respPtr := opPtr + "/responses/" + code
	if resp == nil {
		resp, _ = responses["default"].(map[string]any)
		respPtr = opPtr + "/responses/default"
	}
	if resp == nil {
		if status == http.StatusMethodNotAllowed || status == http.StatusInternalServerError {
			return v.checkError(l, status, body)
		}
		return fmt.Errorf("openapi: %s %s answered %d, which is not documented; body %s", method, key, status, trim(body))
	}
	resp, respPtr = v.resolve(resp, respPtr)
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 {
		if len(bytes.TrimSpace(body)) != 0 {
			return fmt.Errorf("openapi: %s %s %d must have an empty body, got %s", method, key, status, trim(body))
		}
		return nil
	}
	ct := header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	media, ok := content[mt].(map[string]any)
	if !ok {
		return fmt.Errorf("openapi: %s %s %d answered Content-Type %q; documented: %v", method, key, status, ct, keysOf(content))
	}
	if _, ok := media["schema"]; !ok {
		return nil
	}
	schemaPtr := respPtr + "/content/" + escape(mt) + "/schema"
	return v.validate(schemaPtr, mt, body, fmt.Sprintf("%s %s %d", method, key, status))
}

// CheckRequest validates a JSON request body to the main listener against
// the document.
func (v *Validator) CheckRequest(method, path string, body []byte) error {
	return v.CheckRequestOn(MainListener, method, path, body)
}

// CheckRequestOn is CheckRequest for a request to listener l.
func (v *Validator) CheckRequestOn(l Listener, method, path string, body []byte) error {
	key, ok := v.MatchOn(l, path)
	if !ok {
		return fmt.Errorf("openapi: no path matches %s", path)
	}
	opPtr := "/paths/" + escape(key) + "/" + strings.ToLower(method)
	op, _ := v.doc["paths"].(map[string]any)[key].(map[string]any)[strings.ToLower(method)].(map[string]any)
	if op == nil {
		return fmt.Errorf("openapi: %s %s is not documented", method, key)
	}
	rb, _ := op["requestBody"].(map[string]any)
	if rb == nil {
		if len(body) > 0 {
			return fmt.Errorf("openapi: %s %s documents no request body", method, key)
		}
		return nil
	}
	rb, ptr := v.resolve(rb, opPtr+"/requestBody")
	content, _ := rb["content"].(map[string]any)
	if _, ok := content["application/json"]; !ok {
		return nil
	}
	return v.validate(ptr+"/content/application~1json/schema", "application/json", body, "request "+method+" "+key)
}

func (v *Validator) validate(schemaPtr, mediaType string, body []byte, what string) error {
	sch, err := v.schema(schemaPtr)
	if err != nil {
		return fmt.Errorf("openapi: compile %s: %v", schemaPtr, err)
	}
	var inst any
	if mediaType == "application/json" || strings.HasSuffix(mediaType, "+json") {
		inst, err = jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("openapi: %s: body is not JSON: %v: %s", what, err, trim(body))
		}
	} else {
		inst = string(body)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("openapi: %s: body does not match the schema: %v\nbody: %s", what, err, trim(body))
	}
	return nil
}

// checkError validates an error that no call documents against the error
// envelope of the listener that answered.
func (v *Validator) checkError(l Listener, status int, body []byte) error {
	return v.validate(errorSchema[l], "application/json", body, fmt.Sprintf("%s listener error %d", l, status))
}

func (l Listener) String() string {
	if l == AnalyticsListener {
		return "analytics"
	}
	return "main"
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func trim(b []byte) string {
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
