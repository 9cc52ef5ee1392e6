package api

import (
	"net/http"

	"github.com/wnms/wnms/internal/httpkit"
	"github.com/wnms/wnms/internal/wnms"
)

// localNode checks the nodeid parameter (nodeId, as some calls spell it):
// 0 or absent addresses this server. This server has no cluster children
// yet, so any other node is INVALID_PARAMETER, as an unknown child is.
func localNode(r *http.Request) error {
	for _, name := range []string{"nodeid", "nodeId"} {
		n, err := httpkit.QueryInt(r, name, 0)
		if err != nil {
			return err
		}
		if n != 0 {
			return wnms.ParamError(name, "no cluster child %d: this server has no cluster children", n)
		}
	}
	return nil
}
