#!/usr/bin/env bash
# Builds the release binaries of wnms: static (CGO_ENABLED=0, no libc),
# reproducible paths (-trimpath), stamped with the version and the commit
# (`wnms version` prints both), and writes dist/SHA256SUMS over them.
#
#   scripts/release.sh [VERSION [ARCH...]]
#
# VERSION defaults to the newest v* tag at HEAD (without the v), else
# 0.0.0+git<date>.<short commit>; ARCH (Linux only) defaults to amd64 and
# arm64. The binaries are dist/wnms_<VERSION>_linux_<ARCH>; SHA256SUMS lists
# every dist/wnms_<VERSION>_* file, so the .deb files of scripts/deb.sh join
# it too. Check a download with: sha256sum -c --ignore-missing SHA256SUMS
# `scripts/release.sh --print-version` prints the default VERSION.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

default_version() {
	local tag
	if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
		echo "${tag#v}"
	elif git rev-parse --git-dir >/dev/null 2>&1; then
		echo "0.0.0+git$(git log -1 --format=%cd --date=format:%Y%m%d).$(git rev-parse --short=12 HEAD)"
	else
		echo "0.0.0+unknown"
	fi
}

if [[ ${1:-} == --print-version ]]; then
	default_version
	exit 0
fi
version=${1:-$(default_version)}
shift || true
arches=("$@")
((${#arches[@]})) || arches=(amd64 arm64)
if [[ ! $version =~ ^[0-9][A-Za-z0-9.+~-]*$ ]]; then
	echo "release.sh: version $version: must start with a digit and hold only letters, digits and . + ~ -" >&2
	exit 2
fi

# The commit, with -modified when the work tree differs from it (as the Go
# toolchain's own vcs.modified says), so a binary built from uncommitted
# changes never passes for the commit.
commit=unknown
if git rev-parse --git-dir >/dev/null 2>&1; then
	commit=$(git rev-parse HEAD)
	[[ -z $(git status --porcelain) ]] || commit+=-modified
fi

mkdir -p dist
for arch in "${arches[@]}"; do
	out="dist/wnms_${version}_linux_${arch}"
	echo "building $out (commit $commit)"
	# -s -w drop the symbol table and DWARF; Go keeps what stack traces
	# and the profiler need. -buildvcs=false: the commit is stamped above.
	CGO_ENABLED=0 GOOS=linux GOARCH="$arch" go build -trimpath -buildvcs=false \
		-ldflags "-s -w -X main.Version=$version -X main.Commit=$commit" -o "$out.tmp" ./cmd/wnms
	mv "$out.tmp" "$out"
done

(
	cd dist
	files=()
	for f in wnms_"${version}"_*; do
		[[ -f $f && $f != *.tmp ]] && files+=("$f")
	done
	sha256sum "${files[@]}" >SHA256SUMS
	cat SHA256SUMS
)
