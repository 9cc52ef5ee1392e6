package api

import (
	"net/http"
	"strconv"

	"github.com/wnms/wnms/openapi"
)

// openAPI is GET /openapi.json: the OpenAPI 3.1 document of both listeners.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	b, err := openapi.Document()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return nil
}
