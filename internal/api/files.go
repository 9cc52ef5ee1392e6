package api

import (
	"bytes"
	"image"
	_ "image/gif" // registers the decoders image.DecodeConfig uses
	_ "image/jpeg"
	_ "image/png"
	"net/http"
	"strconv"
	"strings"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"

	"github.com/wnms/wnms/internal/wnms"
)

// layoutUploadPart is the multipart form part that carries an upload.
const layoutUploadPart = "uploadedFile"

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
	switch f.Kind {
	case wnms.FileExport:
		// An export is its maker's: it holds what that user may see.
		if f.CustomerID != c.CustomerID() || f.UserID != c.User.UserID {
			return notFound
		}
		return writeFile(w, f)
	case wnms.FileBundle:
		// A log bundle is its customer's, as the events that name it are.
		if f.CustomerID != c.CustomerID() {
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
	case wnms.FileBundle:
		h.Set("Content-Disposition", `attachment; filename="connection-logs-`+f.Key+`.bin"`)
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
