package telemetry

import (
	"crypto/rand"
	"net/http"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// MaxLogBundle is the largest connection log bundle an ingest may attach.
const MaxLogBundle = MaxIngestBody

// ingestFile is POST /ingest/files: a connection log bundle (the multipart
// part uploadedFile), kept in the store for failure events to name by the
// fileId it answers. It is its customer's, and purged with telemetry.
func (s *Service) ingestFile(w http.ResponseWriter, r *http.Request) error {
	data, err := httpkit.ReadUpload(w, r, "uploadedFile", MaxLogBundle)
	if err != nil {
		return err
	}
	c := wnms.CallerFrom(r.Context())
	f := &wnms.File{Key: rand.Text() + rand.Text(), CustomerID: c.CustomerID(), UserID: c.User.UserID,
		Kind: wnms.FileBundle, LocationID: wnms.RootLocation, ContentType: "application/octet-stream", Data: data}
	if err := s.Store.PutExport(r.Context(), f); err != nil {
		return err
	}
	httpkit.WriteJSON(w, http.StatusOK, map[string]string{"fileId": f.Key})
	return nil
}
