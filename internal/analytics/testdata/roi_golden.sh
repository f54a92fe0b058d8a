#!/bin/sh
# Evaluates roi_golden.fods (the net flows of the golden portfolio of
# roi_test.go, worked out by hand there) with LibreOffice Calc headless and
# prints npv and irr per case, independently of the Go code.
# Needs soffice (LibreOffice 7.4 was used). Usage: testdata/roi_golden.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
soffice -env:UserInstallation="file://$work/profile" --headless \
	--convert-to 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false' \
	--outdir "$work" "$here/roi_golden.fods" >/dev/null 2>&1
test -s "$work/roi_golden.csv" || { echo "soffice produced no CSV" >&2; exit 1; }
head -6 "$work/roi_golden.csv"
