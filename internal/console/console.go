// Package console serves the web console: one page and its script and
// style sheet, embedded in the binary, that use the public HTTP API with
// the same session cookie as every other client. Nothing is fetched from
// elsewhere at run time, and no third-party code is bundled.
package console

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed assets
var assets embed.FS

// asset is one embedded file, ready to serve plain or gzipped.
type asset struct {
	body, gz    []byte
	contentType string
	etag        string
}

// Handler serves the console: the page at / and /console/ (and any path
// below /console/ that names no file, so a bookmarked view reloads), the
// files at /console/<name>.
type Handler struct {
	files map[string]*asset
}

// New loads the embedded files.
func New() *Handler {
	h := &Handler{files: map[string]*asset{}}
	err := fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.files[strings.TrimPrefix(p, "assets/")] = &asset{body: b, gz: z.Bytes(), contentType: ct,
			etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
		return nil
	})
	if err != nil {
		panic("console: embedded assets: " + err.Error()) // a build defect, not a run-time condition
	}
	return h
}

// Size is the bytes the console's script and style sheets take, gzipped
// as served.
func (h *Handler) Size() (plain, gzipped int) {
	for name, a := range h.files {
		if strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css") {
			plain += len(a.body)
			gzipped += len(a.gz)
		}
	}
	return plain, gzipped
}

// securityHeaders keep the page to its own origin: scripts and styles
// only from the server, no framing, no referrer leaving it.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "+
		"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

// ServeHTTP serves GET and HEAD.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := h.files[strings.TrimPrefix(r.URL.Path, "/console/")]
	if a == nil { // "/", or a view's address below /console/
		a = h.files["index.html"]
	}
	hd := w.Header()
	securityHeaders(hd)
	hd.Set("Content-Type", a.contentType)
	// Revalidated on every load, so a new version of wnms is picked up at
	// once; an unchanged file costs a 304.
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	hd.Add("Vary", "Accept-Encoding")
	if match := r.Header.Get("If-None-Match"); match != "" && strings.Contains(match, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if acceptsGzip(r) {
		body = a.gz
		hd.Set("Content-Encoding", "gzip")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(body)
	}
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && !strings.HasPrefix(strings.ReplaceAll(q, " ", ""), "q=0") {
			return true
		}
	}
	return false
}
