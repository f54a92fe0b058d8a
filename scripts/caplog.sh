#!/usr/bin/env bash
# caplog.sh FILE [MAX_BYTES] [KEEP]: append standard input to FILE line by line, and rotate it
# before it would pass MAX_BYTES: FILE becomes FILE.1, FILE.1 becomes FILE.2, ... up to
# FILE.KEEP (older ones are dropped). So a process started by `make run` writes at most
# (KEEP + 1) x MAX_BYTES however long it runs and however much it logs (the API logs every
# request: 153 MB after one load test). Defaults: RUN_LOG_MAX_BYTES (20 MiB), RUN_LOG_KEEP (3).
set -euo pipefail
file="$1"
max="${2:-${RUN_LOG_MAX_BYTES:-20971520}}"
keep="${3:-${RUN_LOG_KEEP:-3}}"
size=0
if [[ -f $file ]]; then
	size="$(stat -c %s "$file")"
fi
# LC_ALL=C: length() counts bytes. Each line is flushed, so `tail -f` follows the log live.
# q() quotes a path for system(): the '\'' runs inside the awk program are meant.
# shellcheck disable=SC1003
LC_ALL=C exec awk -v file="$file" -v max="$max" -v keep="$keep" -v size="$size" '
function q(s) { gsub(/'\''/, "'\''\\'\'''\''", s); return "'\''" s "'\''" }
function rotate(i) {
	close(file)
	for (i = keep - 1; i >= 1; i--) system("mv -f " q(file "." i) " " q(file "." (i + 1)) " 2>/dev/null")
	if (keep > 0) system("mv -f " q(file) " " q(file ".1"))
	else system(": >" q(file))
	size = 0
}
{
	n = length($0) + 1
	if (size > 0 && size + n > max) rotate()
	print >> file
	fflush(file)
	size += n
}'
