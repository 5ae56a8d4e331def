#!/usr/bin/env bash
# make data: download the larger LIBSVM sets listed in SOURCES into extra/
# and check each against its pinned SHA-256; make data-check: check the
# shipped files against SHA256SUMS.
#
#   fetch.sh            download what SOURCES lists and is not there yet, check every sum
#   fetch.sh --check    check the shipped files (SHA256SUMS) and whatever extra/ holds
#   DATA_SETS="a9a w8a" only these; DATA_URL_BASE=URL fetch NAME from URL/<file> instead
#   (a mirror, or file:///dir for tests); DATA_PIN=1 pin the sum of a set that has none
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sources=${DATA_SOURCES:-$here/SOURCES}
extra=${DATA_DIR:-$here/extra}

sum_of() { sha256sum "$1" | cut -d' ' -f1; }

if [ "${1:-}" = "--check" ]; then
  (cd "$here" && sha256sum --quiet -c SHA256SUMS) || { echo "the shipped data differ from convex/data/SHA256SUMS" >&2; exit 1; }
  echo "shipped data: $(wc -l < "$here/SHA256SUMS") files match SHA256SUMS"
  if [ -f "$extra/SHA256SUMS" ]; then
    (cd "$extra" && sha256sum --quiet -c SHA256SUMS) || { echo "the files in $extra differ from their sums" >&2; exit 1; }
    echo "extra data: $(wc -l < "$extra/SHA256SUMS") files match"
  fi
  exit 0
fi

mkdir -p "$extra"
failed=0
while read -r name url want; do
  case "$name" in ''|'#'*) continue ;; esac
  if [ -n "${DATA_SETS:-}" ] && [[ " $DATA_SETS " != *" $name "* ]]; then continue; fi
  [ -n "${DATA_URL_BASE:-}" ] && url="$DATA_URL_BASE/${url##*/}"
  if [ ! -f "$extra/$name" ]; then
    echo "== $name: $url"
    tmp=$(mktemp "$extra/.$name.XXXXXX")
    if ! curl -fsSL --retry 2 -o "$tmp" "$url"; then
      rm -f "$tmp"; echo "$name: download failed ($url)" >&2; failed=1; continue
    fi
    if [[ "$url" == *.bz2 ]]; then bunzip2 -c "$tmp" > "$tmp.out" && mv "$tmp.out" "$tmp"; fi
    mv "$tmp" "$extra/$name"
  fi
  got=$(sum_of "$extra/$name")
  if [ "$want" = "-" ]; then
    if [ "${DATA_PIN:-}" = 1 ]; then
      sed -i "s|^\($name[[:space:]].*[[:space:]]\)-\$|\1$got|" "$sources"
      echo "$name: pinned $got in $sources (commit it)"
    else
      echo "$name: no sum is pinned in $sources; its SHA-256 is $got: check it, then pin it (DATA_PIN=1 make data)" >&2
      failed=1; continue
    fi
  elif [ "$got" != "$want" ]; then
    echo "$name: SHA-256 $got, want $want (pinned in $sources): removed" >&2
    rm -f "$extra/$name"; failed=1; continue
  fi
  echo "$got  $name" >> "$extra/SHA256SUMS.new"
  echo "$name: ok ($(wc -l < "$extra/$name") rows)"
done < "$sources"
if [ -f "$extra/SHA256SUMS.new" ]; then
  { [ -f "$extra/SHA256SUMS" ] && cat "$extra/SHA256SUMS"; cat "$extra/SHA256SUMS.new"; } | sort -u -k2,2 > "$extra/SHA256SUMS.tmp"
  mv "$extra/SHA256SUMS.tmp" "$extra/SHA256SUMS"; rm -f "$extra/SHA256SUMS.new"
fi
exit $failed
