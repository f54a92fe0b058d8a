#!/bin/sh
# Recomputes the golden NPV/IRR figures of golden_test.go with LibreOffice
# Calc, independently of the Go code: rewrites golden.fods from the flows of
# the test table, lets Calc evaluate its formulas headless, and prints one
# line per case. Copy npv and irr_annual into goldenCases.
# Needs go and soffice (LibreOffice 7.4 was used). Usage: testdata/golden.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
(cd "$here/.." && go test -count=1 -run '^TestGoldenSheet$' . -update-sheet >/dev/null)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Own profile, so it runs beside another soffice. Filter options: comma,
# quote, UTF-8, from line 1, ..., "save cell contents as shown" = false, so
# results keep 15 significant digits.
soffice -env:UserInstallation="file://$work/profile" --headless \
	--convert-to 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false,false' \
	--outdir "$work" "$here/golden.fods" >/dev/null 2>&1
test -s "$work/golden.csv" || { echo "soffice produced no CSV" >&2; exit 1; }

# Rows 1..9 hold the case names and results; print them one case a line.
awk -F, 'NR <= 9 { for (i = 1; i <= NF; i++) cell[NR, i] = $i; if (NF > cols) cols = NF }
END {
	printf "%-20s %-18s %-22s %-22s %-22s %-6s %-22s\n", "case", "npv", "irr_monthly", "irr_annual", "monthly_rate", "guess", "irr_monthly(alt_guess)"
	for (i = 2; i <= cols; i++)
		printf "%-20s %-18s %-22s %-22s %-22s %-6s %-22s\n", cell[1, i], cell[4, i], cell[5, i], cell[6, i], cell[3, i], cell[7, i], cell[9, i] " (" cell[8, i] ")"
}' "$work/golden.csv"
