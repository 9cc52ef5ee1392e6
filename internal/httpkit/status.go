package httpkit

import (
	"net/http"

	"github.com/wnms/wnms/internal/wnms"
)

// codeStatus maps each error code of the domain to its HTTP status: the one
// place where errors meet HTTP (api.md §3).
var codeStatus = map[string]int{
	wnms.InvalidRequestBody:    http.StatusBadRequest,
	wnms.InvalidParameter:      http.StatusBadRequest,
	wnms.MissingParameter:      http.StatusBadRequest,
	wnms.ValidationFailed:      http.StatusBadRequest,
	wnms.PageSizeExceeded:      http.StatusBadRequest,
	wnms.SelectiveFetch:        http.StatusBadRequest,
	wnms.NotSupportedInCluster: http.StatusBadRequest,
	wnms.InvalidFilter:         http.StatusBadRequest,
	wnms.UnsupportedAuthType:   http.StatusBadRequest,
	wnms.InvalidCredentials:    http.StatusUnauthorized,
	wnms.SessionRequired:       http.StatusUnauthorized,
	wnms.SessionExpired:        http.StatusUnauthorized,
	wnms.AccessDenied:          http.StatusForbidden,
	wnms.LocationAccessDenied:  http.StatusForbidden,
	wnms.ResourceNotFound:      http.StatusNotFound,
	wnms.MethodNotAllowed:      http.StatusMethodNotAllowed,
	wnms.DuplicateEntity:       http.StatusConflict,
	wnms.Conflict:              http.StatusConflict,
	wnms.PayloadTooLarge:       http.StatusRequestEntityTooLarge,
	wnms.UnsupportedMediaType:  http.StatusUnsupportedMediaType,
	wnms.RateLimited:           http.StatusTooManyRequests,
	wnms.InternalError:         http.StatusInternalServerError,
	wnms.ChildUnreachable:      http.StatusBadGateway,
	wnms.ChildTimeout:          http.StatusGatewayTimeout,
}

// Status is the HTTP status of an error code; an unknown code is 500.
func Status(code string) int {
	if s, ok := codeStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
