#!/usr/bin/env bash
# Builds the Debian package of wnms with dpkg-deb alone (no debhelper):
#
#   scripts/deb.sh [VERSION [ARCH]]
#
# VERSION as scripts/release.sh takes it (the same default); ARCH amd64
# (default) or arm64. It uses dist/wnms_<VERSION>_linux_<ARCH> when
# scripts/release.sh made it, else builds it, and writes
# dist/wnms_<VERSION>_<ARCH>.deb holding:
#   /usr/bin/wnms                       the static binary
#   /lib/systemd/system/wnms.service    the hardened unit (packaging/wnms.service)
#   /etc/default/wnms                   its settings, a conffile (packaging/wnms.default)
#   /usr/share/doc/wnms/                copyright, changelog, install.md
# and maintainer scripts (packaging/debian) that make the wnms system user
# and /var/lib/wnms, and remove both on purge.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=${1:-}
arch=${2:-amd64}
if [[ -z $version ]]; then
	version=$(scripts/release.sh --print-version)
fi
case $arch in
amd64 | arm64) ;;
*)
	echo "deb.sh: architecture $arch: amd64 or arm64" >&2
	exit 2
	;;
esac

bin="dist/wnms_${version}_linux_${arch}"
[[ -f $bin ]] || scripts/release.sh "$version" "$arch"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
install -D -m 0755 "$bin" "$root/usr/bin/wnms"
install -D -m 0644 packaging/wnms.service "$root/lib/systemd/system/wnms.service"
install -D -m 0644 packaging/wnms.default "$root/etc/default/wnms"
install -D -m 0644 packaging/debian/copyright "$root/usr/share/doc/wnms/copyright"
install -D -m 0644 docs/install.md "$root/usr/share/doc/wnms/install.md"
# Lintian calls any static binary an error; a Go program is static on purpose.
mkdir -p "$root/usr/share/lintian/overrides"
cat >"$root/usr/share/lintian/overrides/wnms" <<'OVERRIDES'
# wnms is a Go program built with CGO_ENABLED=0: static by design, it needs no libc.
wnms: statically-linked-binary [usr/bin/wnms]
OVERRIDES
date=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
cat >"$root/usr/share/doc/wnms/changelog.Debian" <<CHANGELOG
wnms ($version) unstable; urgency=medium

  * Built by scripts/deb.sh from commit $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown).

 -- wnms maintainers <wnms@example.org>  $date
CHANGELOG
gzip -9n "$root/usr/share/doc/wnms/changelog.Debian"

mkdir -p "$root/DEBIAN"
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$root/DEBIAN/"
echo /etc/default/wnms >"$root/DEBIAN/conffiles"
installed_size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: wnms
Version: $version
Architecture: $arch
Maintainer: wnms maintainers <wnms@example.org>
Installed-Size: $installed_size
Depends: adduser
Section: net
Priority: optional
Homepage: https://github.com/wnms/wnms
Description: Wi-Fi network management server (monitoring and analytics)
 wnms collects what access points, RADIUS and syslog say about a Wi-Fi
 network (clients, connections, failures, AP health) and serves it through
 a web console, the Wireless Manager web-service API of CV-CUE, SNMP,
 webhooks and Prometheus metrics. It does not configure access points.
 .
 One static binary with an embedded SQLite store, or PostgreSQL for scale;
 this package runs it as the wnms system service.
CONTROL

out="dist/wnms_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group -Zxz "$root" "$out"
(
	cd dist
	files=()
	for f in wnms_"${version}"_*; do
		[[ -f $f && $f != *.tmp ]] && files+=("$f")
	done
	sha256sum "${files[@]}" >SHA256SUMS
)
ls -l "$out"
