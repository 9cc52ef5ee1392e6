package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/wnms/wnms/internal/auth"
	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// layoutFloor reads the required locationid of a layout call: it must name
// a floor the caller sees (api.md §11: only floors take layouts).
func (s *Server) layoutFloor(r *http.Request) (*wnms.Location, error) {
	l, err := s.locationParam(r, -2)
	if err != nil {
		return nil, err
	}
	if l.Type != wnms.FloorLocation {
		return nil, wnms.ParamError("locationid", "location %d is a folder; only floor locations take layouts", l.ID.ID)
	}
	return l, nil
}

// layoutResponse is the Floor layout as the calls answer it: its location
// object is the floor itself.
func layoutResponse(l *wnms.FloorLayout, floor *wnms.Location) *wnms.FloorLayout {
	f := *floor
	f.AccessibleToUser = true
	f.Children = nil
	l.Location = &f
	l.Resolve()
	return l
}

// decodeLayout decodes and validates a POST /layouts body for the floor
// locationID. Malformed JSON, wrong types and unknown enum values are
// INVALID_REQUEST_BODY; broken rules are VALIDATION_FAILED.
func decodeLayout(body []byte, locationID int64) (*wnms.FloorLayout, *wnms.LayoutInput, error) {
	var in wnms.LayoutInput
	if err := wnms.DecodeJSON(body, &in); err != nil {
		return nil, nil, err
	}
	l, err := in.Layout(locationID)
	if err != nil {
		return nil, nil, err
	}
	return l, &in, nil
}

// getLayout is GET /layouts?locationid=: the floor's layout, 404 when it
// has none.
func (s *Server) getLayout(w http.ResponseWriter, r *http.Request) error {
	floor, err := s.layoutFloor(r)
	if err != nil {
		return err
	}
	l, obstacles, err := s.Store.LayoutJSON(r.Context(), floor.ID.ID)
	if err != nil {
		return err
	}
	head, tail, err := spliceObstacles(layoutResponse(l, floor))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(head)+len(obstacles)+len(tail)))
	w.WriteHeader(http.StatusOK)
	w.Write(head)
	w.Write(obstacles)
	w.Write(tail)
	return nil
}

// emptyObstaclesInfo is how a layout whose ObstaclesInfo is the zero value
// encodes that field's value.
var emptyObstaclesInfo = []byte(`"obstaclesInfo":{"materialProperties":null,"obstacles":null,"obstacleGroupList":null}`)

// spliceObstacles encodes l without its obstaclesInfo value: the body is
// head, then the stored obstaclesInfo JSON (the encoding of a validated
// ObstaclesInfo), then tail. Reading a large layout so costs neither
// decoding nor re-encoding its obstacles. The field is found by its bytes:
// a quote inside any string value is escaped, so the sequence can only be
// the field itself.
func spliceObstacles(l *wnms.FloorLayout) (head, tail []byte, err error) {
	l.ObstaclesInfo = wnms.ObstaclesInfo{}
	b, err := json.Marshal(l)
	if err != nil {
		return nil, nil, err
	}
	i := bytes.Index(b, emptyObstaclesInfo)
	if i < 0 {
		return nil, nil, errors.New("layout encoding lacks obstaclesInfo")
	}
	return b[:i+len(`"obstaclesInfo":`)], b[i+len(emptyObstaclesInfo):], nil
}

// setLayout is POST /layouts?locationid=: create or replace the floor's
// layout. The attached files stay.
func (s *Server) setLayout(w http.ResponseWriter, r *http.Request) error {
	floor, err := s.layoutFloor(r)
	if err != nil {
		return err
	}
	body, err := httpkit.ReadJSON(w, r, httpkit.MaxLayoutBody)
	if err != nil {
		return err
	}
	l, in, err := decodeLayout(body, floor.ID.ID)
	if err != nil {
		return err
	}
	err = s.Store.PutLayout(r.Context(), l, in.UsesSpmFile)
	if wnms.ErrorCode(err) == wnms.ResourceNotFound {
		// The floor was deleted since layoutFloor read it.
		return wnms.ParamError("locationid", "no location %d", floor.ID.ID)
	}
	if err != nil {
		return wnms.AtField(err, "usesSpmFile")
	}
	return noContent(w)
}

// deleteLayout is DELETE /layouts?locationid=: the layout and its files go.
func (s *Server) deleteLayout(w http.ResponseWriter, r *http.Request) error {
	floor, err := s.layoutFloor(r)
	if err != nil {
		return err
	}
	if err := s.Store.DeleteLayout(r.Context(), floor.ID.ID); err != nil {
		return err
	}
	return noContent(w)
}

// layoutImageLink is GET /layouts/image?locationid=: the text link
// webservice/sfiles?id=<imageKey> (api.md §11), as text/plain.
func (s *Server) layoutImageLink(w http.ResponseWriter, r *http.Request) error {
	floor, err := s.layoutFloor(r)
	if err != nil {
		return err
	}
	l, err := s.Store.Layout(r.Context(), floor.ID.ID)
	if err != nil {
		return err
	}
	if l.ImageKey == nil {
		return wnms.NotFound("the layout of floor %d has no image", floor.ID.ID)
	}
	link := "webservice/sfiles?id=" + *l.ImageKey
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, link)
	return nil
}

// uploadLayoutImage is POST /layouts/image?locationid=: multipart part
// uploadedFile, a GIF, JPEG or PNG (by content) of at most 20 MiB and
// 20,000 px a side, replaces the layout's image. Answers the layout.
func (s *Server) uploadLayoutImage(w http.ResponseWriter, r *http.Request) error {
	floor, err := s.layoutFloor(r)
	if err != nil {
		return err
	}
	// Refuse before reading a large body when there is nothing to attach to.
	if _, err := s.Store.Layout(r.Context(), floor.ID.ID); err != nil {
		return err
	}
	data, err := httpkit.ReadUpload(w, r, layoutUploadPart, wnms.MaxImageSize)
	if err != nil {
		return err
	}
	ct, err := sniffLayoutImage(data)
	if err != nil {
		return err
	}
	l, err := s.Store.AttachFile(r.Context(), &wnms.File{Key: auth.RandomToken(32), LocationID: floor.ID.ID,
		Kind: wnms.FileImage, ContentType: ct, Data: data})
	if err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, layoutResponse(l, floor))
	return nil
}

// uploadLayoutSPM is POST /layouts/spm?locationid=: multipart part
// uploadedFile, any bytes up to 64 MiB, becomes the layout's SPM file; the
// layout then uses it (usesSpmFile, rfParams = rfParamsSPM).
func (s *Server) uploadLayoutSPM(w http.ResponseWriter, r *http.Request) error {
	floor, err := s.layoutFloor(r)
	if err != nil {
		return err
	}
	if _, err := s.Store.Layout(r.Context(), floor.ID.ID); err != nil {
		return err
	}
	data, err := httpkit.ReadUpload(w, r, layoutUploadPart, wnms.MaxSPMSize)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return wnms.Invalid(layoutUploadPart, "the SPM file is empty")
	}
	if _, err := s.Store.AttachFile(r.Context(), &wnms.File{Key: auth.RandomToken(32), LocationID: floor.ID.ID,
		Kind: wnms.FileSPM, ContentType: "application/octet-stream", Data: data}); err != nil {
		return err
	}
	return noContent(w)
}
