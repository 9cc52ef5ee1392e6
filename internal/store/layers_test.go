package store_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayers keeps the layers apart: only internal/api (and the listener
// kit it uses) speaks HTTP, so neither the store nor the services it
// serves depend on net/http, even indirectly; and the store imports no
// service package, only the domain.
func TestLayers(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	for _, pkg := range []string{".", "../telemetry", "../baseline", "../snmp", "../auth", "../accounts", "../access", "../wnms"} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == "net/http" || strings.HasSuffix(dep, "/internal/httpkit") || strings.HasSuffix(dep, "/internal/api") {
				t.Errorf("%s depends on %s: only internal/api speaks HTTP", pkg, dep)
			}
		}
	}
	// The store serves the services and knows only the domain: of the
	// project's packages it imports internal/wnms, and internal/rounds
	// (the group commit's queue, which imports none).
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "/wnms/internal/") && !strings.HasSuffix(dep, "/internal/wnms") && !strings.HasSuffix(dep, "/internal/store") &&
			!strings.HasSuffix(dep, "/internal/rounds") {
			t.Errorf("the store depends on %s: it may import the domain (internal/wnms) and internal/rounds only", dep)
		}
	}
}
