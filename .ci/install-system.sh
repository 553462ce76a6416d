#!/usr/bin/env bash
# Installs the Debian packages the project needs (LibreOffice for the sidecar, fonts, test tools), only those
# missing. Used by `npm start` and by CI. Needs root; otherwise prints what to install and exits non-zero.
set -euo pipefail
packages=(
  libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui python3-uno bubblewrap
  fonts-dejavu fonts-crosextra-carlito fonts-crosextra-caladea
  poppler-utils espeak-ng ffmpeg chromium mupdf-tools
  qpdf libimage-exiftool-perl zip unzip stress-ng openssl
)
# One dpkg query for every package (a check, ~0.1 s): the installed ones print their name.
installed=" $(dpkg-query -W -f='${Status} ${Package}\n' "${packages[@]}" 2>/dev/null | awk '/^install ok installed /{printf "%s ", $NF}' || true)"
missing=()
for p in "${packages[@]}"; do
  [[ "$installed" == *" $p "* ]] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "edgefloor: missing system packages: ${missing[*]}" >&2
  echo "edgefloor: install them with: sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "edgefloor: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
