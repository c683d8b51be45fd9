#!/bin/sh
# The committed seed corpus is what gen_corpus writes today: a wire-format
# change that invalidates it fails here. Usage: check_corpus.sh <gen_corpus>
# <committed corpus dir>
set -eu
gen=$1 corpus=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$gen" "$tmp"
if ! diff -r "$tmp" "$corpus"; then
	echo "seed corpus is stale: run $gen $corpus and commit it" >&2
	exit 1
fi
echo "seed corpus: $(find "$corpus" -type f | wc -l) files, up to date"
