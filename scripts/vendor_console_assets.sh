#!/usr/bin/env bash
# Re-vendor the chart libraries used by the web console (api/static/vendor/).
#
# The console is served with no build step and no CDN, so the minified UMD
# builds of vega, vega-lite (v5) and vega-embed are copied in from the npm
# registry, each with its LICENSE, and the versions are recorded in
# VERSIONS.txt. Run from anywhere; needs `npm`. Versions are pinned so the
# result is reproducible; vega-embed 6.x is the line that pairs with vega 5.
set -euo pipefail

VEGA_VERSION="${VEGA_VERSION:-5.33.1}"
VEGA_LITE_VERSION="${VEGA_LITE_VERSION:-5.23.0}"
VEGA_EMBED_VERSION="${VEGA_EMBED_VERSION:-6.29.0}"

vega_license() {
  cat <<'LICENSE'
Copyright (c) 2015-2023, University of Washington Interactive Data Lab
All rights reserved.

Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice, this
   list of conditions and the following disclaimer.

2. Redistributions in binary form must reproduce the above copyright notice,
   this list of conditions and the following disclaimer in the documentation
   and/or other materials provided with the distribution.

3. Neither the name of the copyright holder nor the names of its contributors
  may be used to endorse or promote products derived from this software
  without specific prior written permission.

THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT OWNER OR CONTRIBUTORS BE LIABLE
FOR ANY DIRECT, INDIRECT, INCIDENTAL, SPECIAL, EXEMPLARY, OR CONSEQUENTIAL
DAMAGES (INCLUDING, BUT NOT LIMITED TO, PROCUREMENT OF SUBSTITUTE GOODS OR
SERVICES; LOSS OF USE, DATA, OR PROFITS; OR BUSINESS INTERRUPTION) HOWEVER
CAUSED AND ON ANY THEORY OF LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY,
OR TORT (INCLUDING NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE
OF THIS SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
LICENSE
}

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo_root/api/static/vendor"
work="$(mktemp -d "${TMPDIR:-/tmp}/vendor-work.XXXXXX")"
trap 'rm -rf "$work"' EXIT

cd "$work"
for spec in "vega@$VEGA_VERSION" "vega-lite@$VEGA_LITE_VERSION" "vega-embed@$VEGA_EMBED_VERSION"; do
  npm pack --silent "$spec" >/dev/null
done

mkdir -p "$dest"
for name in vega vega-lite vega-embed; do
  tarball="$(ls "$work"/"$name"-[0-9]*.tgz)"
  mkdir -p "$work/$name"
  tar -xzf "$tarball" -C "$work/$name" --strip-components=1
  cp "$work/$name/build/$name.min.js" "$dest/$name.min.js"
  if [[ -f "$work/$name/LICENSE" ]]; then
    cp "$work/$name/LICENSE" "$dest/$name.LICENSE"
  else
    # The vega tarball declares BSD-3-Clause but ships no LICENSE file; this
    # is the text of the LICENSE at the root of the vega repository.
    vega_license > "$dest/$name.LICENSE"
  fi
  # The minified builds reference source maps that are not shipped.
  sed -i -E '$ s|//# sourceMappingURL=.*$||' "$dest/$name.min.js"
done

{
  echo "# Vendored by scripts/vendor_console_assets.sh from the npm registry."
  echo "vega $VEGA_VERSION"
  echo "vega-lite $VEGA_LITE_VERSION"
  echo "vega-embed $VEGA_EMBED_VERSION"
} > "$dest/VERSIONS.txt"

echo "vendored into $dest:"
ls -l "$dest"
