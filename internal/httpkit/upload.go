package httpkit

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/wnms/wnms/internal/wnms"
)

// uploadOverhead is what a multipart body may carry besides the file:
// boundaries, part headers and small form fields.
const uploadOverhead = 1 << 20

// ReadUpload reads the file part named part of a multipart/form-data
// request. It streams the body: nothing goes to disk,
// at most max bytes of the file are kept, and the whole body may not
// exceed max plus a small overhead. Not multipart/form-data is 415, a
// malformed body INVALID_REQUEST_BODY, no such part
// VALIDATION_FAILED, too large 413. Parts other than the file are skipped.
func ReadUpload(w http.ResponseWriter, r *http.Request, part string, max int64) ([]byte, error) {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, wnms.Errorf(wnms.UnsupportedMediaType,
			"the body must be multipart/form-data (with a boundary) carrying a file part named %s, not %q", part, ct)
	}
	r.Body = http.MaxBytesReader(w, r.Body, max+uploadOverhead)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, wnms.Errorf(wnms.UnsupportedMediaType, "the body must be multipart/form-data: %v", err)
	}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil, wnms.Invalid(part, "the multipart body has no file part named %s", part)
		}
		if err != nil {
			return nil, uploadError(err)
		}
		if p.FormName() != part {
			if _, err := io.Copy(io.Discard, p); err != nil {
				return nil, uploadError(err)
			}
			continue
		}
		var buf bytes.Buffer
		n, err := buf.ReadFrom(io.LimitReader(p, max+1))
		if err != nil {
			return nil, uploadError(err)
		}
		if n > max {
			return nil, wnms.Errorf(wnms.PayloadTooLarge, "%s is larger than %d bytes", part, max)
		}
		return buf.Bytes(), nil
	}
}

// uploadError maps an error reading a multipart body: over the body
// limit is 413, anything else a malformed body.
func uploadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return wnms.Errorf(wnms.PayloadTooLarge, "the request body is larger than %d bytes", mbe.Limit)
	}
	return wnms.Errorf(wnms.InvalidRequestBody, "malformed multipart/form-data body")
}
