package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// The version and commit come from -ldflags -X where a release build set
// them, else from the build info the Go toolchain recorded.
func TestResolveVersion(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	vcs := func(modified string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261127142507-0123456789ab+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}}
	}
	tests := []struct {
		name, version, commit string
		bi                    *debug.BuildInfo
		wantVersion, wantCom  string
	}{
		{"release build: both stamped", "1.2.0", "abc", vcs("false"), "1.2.0", "abc"},
		{"version stamped, commit from VCS", "1.2.0", "", vcs("false"), "1.2.0", rev},
		{"plain go build of a clean checkout", "", "", vcs("false"), "v0.0.0-20261127142507-0123456789ab+dirty", rev},
		{"plain go build with uncommitted changes", "", "", vcs("true"), "v0.0.0-20261127142507-0123456789ab+dirty", rev + "-modified"},
		{"tagged module", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0"}}, "v1.3.0", "unknown"},
		{"go run or a test binary", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel", "unknown"},
		{"no build info", "", "", nil, "devel", "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, c := resolveVersion(tt.version, tt.commit, tt.bi)
			if v != tt.wantVersion || c != tt.wantCom {
				t.Errorf("resolveVersion(%q, %q) = %q, %q; want %q, %q", tt.version, tt.commit, v, c, tt.wantVersion, tt.wantCom)
			}
		})
	}
}

// buildWnms builds the wnms binary with the go command's extra args and
// returns its path.
func buildWnms(t *testing.T, env []string, args ...string) string {
	t.Helper()
	gobin := goCommand(t)
	out := filepath.Join(t.TempDir(), "wnms")
	cmd := exec.Command(gobin, append(append([]string{"build", "-o", out}, args...), ".")...)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", args, err, b)
	}
	return out
}

func wnmsVersion(t *testing.T, bin string) string {
	t.Helper()
	b, err := exec.Command(bin, "version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", bin, err, b)
	}
	return string(b)
}

// A binary built as scripts/release.sh builds it says the version and the
// commit it was given; one built with only the version stamped takes the
// commit from the repository (where the toolchain records it).
func TestVersionOfBuiltBinary(t *testing.T) {
	const commit = "89abcdef0123456789abcdef0123456789abcdef"
	t.Run("release build", func(t *testing.T) {
		bin := buildWnms(t, []string{"CGO_ENABLED=0"}, "-trimpath", "-ldflags", "-X main.Version=9.8.7-test -X main.Commit="+commit)
		want := "wnms 9.8.7-test (commit " + commit + ", " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
		if got := wnmsVersion(t, bin); got != want {
			t.Errorf("release build: version says %q, want %q", got, want)
		}
	})
	t.Run("commit from VCS", func(t *testing.T) {
		head, err := exec.Command("git", "rev-parse", "HEAD").Output()
		if err != nil {
			t.Skipf("not in a git checkout (%v): the commit from VCS is not checked", err)
		}
		// The same build but for the commit: only the link is new.
		bin := buildWnms(t, []string{"CGO_ENABLED=0"}, "-trimpath", "-buildvcs=true", "-ldflags", "-X main.Version=9.8.7-test")
		if info, _ := exec.Command(goCommand(t), "version", "-m", bin).Output(); !strings.Contains(string(info), "vcs.revision=") {
			// The go command records no VCS information in a git worktree
			// (its .git is a file): only a plain clone can check this.
			t.Skip("the toolchain recorded no vcs.revision here (a git worktree?)")
		}
		dirty, err := exec.Command("git", "status", "--porcelain").Output()
		if err != nil {
			t.Fatal(err)
		}
		wantCommit := strings.TrimSpace(string(head))
		if len(dirty) > 0 {
			wantCommit += "-modified"
		}
		got := wnmsVersion(t, bin)
		if m := regexp.MustCompile(`^wnms 9\.8\.7-test \(commit ([0-9a-f]{40}(-modified)?), `).FindStringSubmatch(got); m == nil || m[1] != wantCommit {
			t.Errorf("version from VCS: %q, want commit %s", got, wantCommit)
		}
	})
}

// goCommand is the go command that runs this test: `go env GOROOT`'s, as
// the go command exports GOROOT to the tests it runs, else the one on PATH.
func goCommand(t *testing.T) string {
	t.Helper()
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
