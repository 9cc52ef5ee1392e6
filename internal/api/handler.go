package api

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/wnms/wnms/internal/access"
	"github.com/wnms/wnms/internal/httpkit"
)

// handlerFunc is a call's handler: it writes a success response or returns
// an error for the listener's error body.
type handlerFunc = httpkit.HandlerFunc

// The access rules of the route table (routes.go).
var (
	public   = access.Public
	anyRole  = access.AnyRole
	suAdOp   = access.SuAdOp
	suAd     = access.SuAd
	selfOnly = access.SelfOnly
)

// What a call does in a cluster (routes.go).
const (
	forward = httpkit.Forwarded
	fanOut  = httpkit.FannedOut
	local   = httpkit.Local
)

// handle registers a call. The pattern is the method and the path below
// the version segment, as the interface names it.
func (s *Server) handle(pattern string, who access.Rule, cluster httpkit.Cluster, h handlerFunc) {
	s.Router.Handle(pattern, who, cluster, h)
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}
