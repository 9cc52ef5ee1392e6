package api

import (
	"bytes"
	"errors"
	"image"
	_ "image/gif" // registers the decoders image.DecodeConfig uses
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"

	"github.com/wnms/wnms/internal/wnms"
)

// layoutUploadPart is the multipart form part that carries an upload.
const layoutUploadPart = "uploadedFile"

// layoutUploadOverhead is what a multipart body may carry besides the file:
// boundaries, part headers and small form fields.
const layoutUploadOverhead = 1 << 20

// readLayoutUpload reads the file part uploadedFile of a
// multipart/form-data request. It streams the body: nothing goes to disk,
// at most max bytes of the file are kept, and the whole body may not
// exceed max plus a small overhead. Not multipart/form-data is 415, a
// malformed body INVALID_REQUEST_BODY, no uploadedFile part
// VALIDATION_FAILED, too large 413. Parts other than the file are skipped.
func readLayoutUpload(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, wnms.Errorf(wnms.UnsupportedMediaType,
			"the body must be multipart/form-data (with a boundary) carrying a file part named %s, not %q", layoutUploadPart, ct)
	}
	r.Body = http.MaxBytesReader(w, r.Body, max+layoutUploadOverhead)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, wnms.Errorf(wnms.UnsupportedMediaType, "the body must be multipart/form-data: %v", err)
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, wnms.Invalid(layoutUploadPart, "the multipart body has no file part named %s", layoutUploadPart)
		}
		if err != nil {
			return nil, layoutUploadError(err)
		}
		if p.FormName() != layoutUploadPart {
			if _, err := io.Copy(io.Discard, p); err != nil {
				return nil, layoutUploadError(err)
			}
			continue
		}
		var buf bytes.Buffer
		n, err := buf.ReadFrom(io.LimitReader(p, max+1))
		if err != nil {
			return nil, layoutUploadError(err)
		}
		if n > max {
			return nil, wnms.Errorf(wnms.PayloadTooLarge, "%s is larger than %d bytes", layoutUploadPart, max)
		}
		return buf.Bytes(), nil
	}
}

// layoutUploadError maps an error reading a multipart body: over the body
// limit is 413, anything else a malformed body.
func layoutUploadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return wnms.Errorf(wnms.PayloadTooLarge, "the request body is larger than %d bytes", mbe.Limit)
	}
	return wnms.Errorf(wnms.InvalidRequestBody, "malformed multipart/form-data body")
}

// layoutImageFormats are the accepted image formats by their magic bytes.
var layoutImageFormats = []struct{ magic, format, contentType string }{
	{"\x89PNG\r\n\x1a\n", "png", "image/png"},
	{"\xff\xd8\xff", "jpeg", "image/jpeg"},
	{"GIF87a", "gif", "image/gif"},
	{"GIF89a", "gif", "image/gif"},
}

// sniffLayoutImage checks that data is a GIF, JPEG or PNG image by its
// content (magic bytes, then the decoded header; the pixels are never
// decoded) of at most MaxImageSide pixels a side, and returns its content
// type. Not such an image is 415; too many pixels VALIDATION_FAILED.
func sniffLayoutImage(data []byte) (string, error) {
	for _, f := range layoutImageFormats {
		if !bytes.HasPrefix(data, []byte(f.magic)) {
			continue
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil || format != f.format {
			return "", wnms.Errorf(wnms.UnsupportedMediaType, "%s is not a valid %s image", layoutUploadPart, f.format)
		}
		if cfg.Width < 1 || cfg.Height < 1 {
			return "", wnms.Invalid(layoutUploadPart, "the image has no pixels (%d×%d)", cfg.Width, cfg.Height)
		}
		if cfg.Width > wnms.MaxImageSide || cfg.Height > wnms.MaxImageSide {
			return "", wnms.Invalid(layoutUploadPart, "the image is %d×%d pixels; at most %d a side",
				cfg.Width, cfg.Height, wnms.MaxImageSide)
		}
		return f.contentType, nil
	}
	return "", wnms.Errorf(wnms.UnsupportedMediaType, "%s is not a GIF, JPEG or PNG image", layoutUploadPart)
}

// sfile is GET /sfiles?id=: a file attached to a floor layout, or an
// export (which only the user who made it may read), with its content
// type. A file the caller may not read is answered as not found, like an
// unknown key.
func (s *Server) sfile(w http.ResponseWriter, r *http.Request) error {
	key, ok := httpkit.QueryValue(r, "id")
	if !ok || key == "" {
		return wnms.MissingParam("id")
	}
	notFound := wnms.NotFound("no file %q", key)
	if len(key) > 128 {
		return notFound
	}
	ctx := r.Context()
	f, err := s.Store.File(ctx, key)
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(ctx)
	if f.Kind == wnms.FileExport {
		// An export is its maker's: it holds what that user may see.
		if f.CustomerID != c.CustomerID() || f.UserID != c.User.UserID {
			return notFound
		}
		return writeFile(w, f)
	}
	loc, err := s.Store.Location(ctx, f.LocationID)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		return notFound
	}
	if err != nil {
		return err
	}
	if sees, err := access.Sees(ctx, c, loc); err != nil {
		return err
	} else if !sees {
		return notFound
	}
	return writeFile(w, f)
}

// writeFile answers a stored file.
func writeFile(w http.ResponseWriter, f *wnms.File) error {
	h := w.Header()
	h.Set("Content-Type", f.ContentType)
	h.Set("Content-Length", strconv.Itoa(len(f.Data)))
	h.Set("X-Content-Type-Options", "nosniff")
	// Uploaded content is never run as a page of this origin.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	// A key always names the same bytes: a new upload gets a new key.
	h.Set("Cache-Control", "private, max-age=86400, immutable")
	switch f.Kind {
	case wnms.FileSPM:
		h.Set("Content-Disposition", `attachment; filename="floor-`+strconv.FormatInt(f.LocationID, 10)+`.spm"`)
	case wnms.FileExport:
		ext := ".json"
		if strings.HasPrefix(f.ContentType, "text/csv") {
			ext = ".csv"
		}
		h.Set("Content-Disposition", `attachment; filename="associations`+ext+`"`)
	default:
		h.Set("Content-Disposition", "inline")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(f.Data)
	return nil
}
