# Sourced by the Multi30k benchmark scripts: checks the engram binary ($bin) and unpacks the
# test_2016_flickr pair from $data into a fresh $tmp (removed at exit) as $tmp/src.de and
# $tmp/ref.en. $1 names the calling script in error lines.
[ -x "$bin" ] || { echo "$1: $bin missing (build it, or set ENGRAM_BIN)" >&2; exit 1; }
src_gz=$data/multi30k/raw/test_2016_flickr.de.gz
ref_gz=$data/multi30k/raw/test_2016_flickr.en.gz
[ -f "$src_gz" ] && [ -f "$ref_gz" ] || { echo "$1: $src_gz or $ref_gz missing" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
zcat "$src_gz" > "$tmp/src.de"
zcat "$ref_gz" > "$tmp/ref.en"
