package api

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/wnms/wnms/internal/httpkit"
)

// handlerFunc is a call's handler: it writes a success response or returns
// an error for the listener's error body.
type handlerFunc = httpkit.HandlerFunc

// The access rules of the route table (routes.go).
var (
	public   = httpkit.Public
	anyRole  = httpkit.AnyRole
	suAdOp   = httpkit.SuAdOp
	suAd     = httpkit.SuAd
	selfOnly = httpkit.SelfOnly
)

// handle registers a call. The pattern is the method and the path below
// the version segment, as the interface names it.
func (s *Server) handle(pattern string, who httpkit.Access, h handlerFunc) {
	s.Router.Handle(pattern, who, h)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
