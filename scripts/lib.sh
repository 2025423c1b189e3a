# lib.sh: helpers shared by the scripts of scripts/harness and
# scripts/tools, which source it (bash). They find or install
# nats-server, build c4book, start nats-server with JetStream and a token,
# read the CPU time of a process, print a script's help, check its
# options, clean up after it, compare books, and tell and check the
# scenarios of chaos.sh and liar.sh. The caller sets prog (its name, for
# messages) and tmp (a directory of its own, for the build and the Go
# install) first.

nats_version=v2.15.2

# die prints a message naming the script and exits with status 2.
die() { echo "$prog: $*" >&2; exit 2; }

# find_nats_server prints the path of nats-server, taken from PATH, GOBIN
# or $(go env GOPATH)/bin, or installed there with go install.
find_nats_server() {
	local gobin
	gobin=$(go env GOBIN)
	[ -n "$gobin" ] || gobin=$(go env GOPATH)/bin
	if command -v nats-server >/dev/null; then
		command -v nats-server
	elif [ -x "$gobin/nats-server" ]; then
		echo "$gobin/nats-server"
	else
		echo "Installing nats-server $nats_version into $gobin ..." >&2
		(cd "$tmp" && GOFLAGS= go install "github.com/nats-io/nats-server/v2@$nats_version") >&2 || return 1
		echo "$gobin/nats-server"
	fi
}

# find_c4book prints the path of c4book: $C4BOOK if set, else a binary
# built from the repository $1 into $tmp, with the build tags $2 if given
# (liar.sh's c4book_testlie: the lying worker, absent from other builds).
find_c4book() {
	if [ -n "${C4BOOK:-}" ]; then
		echo "$C4BOOK"
		return
	fi
	echo "Building c4book${2:+ with the tags $2} ..." >&2
	(cd "$1" && go build ${2:+-tags "$2"} -o "$tmp/c4book" ./cmd/c4book) >&2 || return 1
	echo "$tmp/c4book"
}

# free_port prints a TCP port nobody listens on, below the range of the
# ports the system gives to outgoing connections when it can (a server
# started again later on the same port then finds it free).
free_port() {
	local p low=60000
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
	[ "$low" -gt 21000 ] || low=60000
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % (low - 20000)))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	die "no free port found"
}

# new_token prints a random token: "t" and 32 hex digits (a letter first,
# as scripts/deploy/nats-server.conf needs).
new_token() { printf 't%s' "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"; }

# write_nats_conf FILE PORT STORE TOKEN [HTTP_PORT] writes the config of a
# nats-server listening on 127.0.0.1:PORT with JetStream in STORE and the
# token TOKEN (kept out of command lines), with its monitoring endpoint on
# 127.0.0.1:HTTP_PORT if given.
write_nats_conf() {
	{
		echo "listen: 127.0.0.1:$2"
		[ -z "${5:-}" ] || echo "http: 127.0.0.1:$5"
		echo "jetstream { store_dir: \"$3\" }"
		echo "authorization { token: \"$4\" }"
	} >"$1"
}

# start_nats_server BINARY CONF LOG starts nats-server in the background,
# sets nats_pid and waits until its log says it is ready (10 seconds at
# most). It returns 1, with the log on standard error, if it is not.
start_nats_server() {
	"$1" -c "$2" >"$3" 2>&1 &
	nats_pid=$!
	for _ in $(seq 100); do
		grep -q "Server is ready" "$3" && return 0
		kill -0 "$nats_pid" 2>/dev/null || break
		sleep 0.1
	done
	cat "$3" >&2
	echo "$prog: nats-server (pid $nats_pid) did not get ready" >&2
	return 1
}

# cpu_ticks prints the user and system CPU time of a live process, in clock
# ticks (Linux), or 0 when it is gone.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# usage prints the help of the script: its header comment, from the second
# line to "set -euo pipefail", without the comment signs.
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; }

# need_numbers VAR... dies unless each variable VAR holds a whole number;
# the message names the option --VAR (an underscore of VAR a dash).
need_numbers() {
	local v
	for v in "$@"; do
		[[ ${!v} =~ ^[0-9]+$ ]] || die "--${v/_/-} ${!v}: not a number"
	done
}

# book_and_dir ARG takes a positional argument of a script whose usage
# ends "BOOK OUTDIR": the first sets book, the second out.
book_and_dir() {
	if [ -z "$book" ]; then book=$1; elif [ -z "$out" ]; then out=$1; else die "one book and one directory"; fi
}

# need_book_and_dir dies, with the script's help, unless both were given.
need_book_and_dir() {
	[ -n "$book" ] && [ -n "$out" ] || { usage >&2; die "a book and a directory are needed"; }
}

# time_wall FILE, time_cpu FILE and time_mem FILE print what GNU time's
# report FILE (time -v) says: the wall time as it writes it, the user and
# system CPU in seconds, the peak memory in MiB.
time_wall() { awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$1"; }
time_cpu() { awk -F': ' '/User time|System time/ {c += $2} END {printf "%.0f", c}' "$1"; }
time_mem() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$1"; }

# keep_or_remove_tmp STATUS [WHAT], for a script's cleanup: it removes
# $tmp when STATUS is 0 and keep (the script's --keep) is not 1, and
# otherwise says that WHAT ("logs" by default) are kept there.
keep_or_remove_tmp() {
	if [ "$1" -eq 0 ] && [ "${keep:-0}" -eq 0 ]; then
		rm -rf "$tmp"
	else
		echo "$prog: ${2:-logs} kept in $tmp" >&2
	fi
}

# kill_all PID... kills (SIGKILL) each process PID still there, then waits
# for every child of the shell.
kill_all() {
	local pid
	for pid in "$@"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}

# now prints the time in seconds.
now() { date +%s; }

# logged FILE PATTERN: FILE has a line matching PATTERN (extended regexp).
logged() { grep -Eq -- "$2" "$1" 2>/dev/null; }

# compare_exports REFERENCE EXPORT DIFF compares the text exports of two
# books of the same job entry for entry, writes each difference to DIFF,
# and sets wrong to the positions with another score than the reference's
# and misplaced to the lines where the positions differ. Both exports list
# the same positions in the same order (depth, then key), each by the same
# move string: line by line, a position is missing or has another score.
compare_exports() {
	paste -d ' ' "$1" "$2" |
		awk '$1 != $3 { print "position", NR, "out of place:", $3, $4, "where the reference has", $1, $2; next }
		     $2 != $4 { print "wrong score:", $1, $4, "where the reference has", $2 }' >"$3"
	wrong=$(grep -c '^wrong score' "$3" || true)
	misplaced=$(grep -c '^position' "$3" || true)
}

# ---- Helpers of a scenario (chaos.sh, liar.sh) ----
#
# A scenario runs in a subshell of its own; it sets name (the scenario's),
# sdir (its directory), t0 (its start, from now_ms) and coord_pid (the
# coordinator's process), and c4book and tmp are set.

# now_ms prints the time in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# secs MS prints MS milliseconds as seconds with one decimal.
secs() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }

# say prints a line of the scenario's story, with the time since it began.
say() { printf '  [%6ss] %s\n' "$(secs $(($(now_ms) - t0)))" "$*"; }

# fail ends the scenario with a FAIL line saying why, which is also added
# to $tmp/results.txt.
fail() {
	echo "FAIL $name: $*" | tee -a "$tmp/results.txt"
	exit 1
}

# alive PID: the process exists and is not a zombie.
alive() {
	local state
	state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ]
}

# coordinator_gone: the coordinator's process has ended.
coordinator_gone() { ! alive "$coord_pid"; }

# wait_for SECONDS WHAT COMMAND... runs COMMAND every 0.1 s (poll_s) until
# it succeeds; after SECONDS the scenario fails, saying it waited for WHAT.
wait_for() {
	local seconds=$1 what=$2
	local limit=$(($(now_ms) + seconds * 1000))
	shift 2
	until "$@"; do
		[ "$(now_ms)" -lt "$limit" ] || fail "waited ${seconds}s in vain for $what"
		sleep "${poll_s:-0.1}"
	done
}

# solve_again N SEED [FLAGS...] checks the book's text export
# $sdir/export.txt against c4book solve (run with FLAGS: the board), which
# knows nothing of the book. It solves again all its positions when N is 0
# or not below their number, else N of them drawn at random (from SEED
# when it is not empty); they are in $sdir/check.txt, the answers in
# $sdir/solved.txt. It sets mismatches to the positions that get another
# score, whose lines (moves book-score moves solve-score) are in
# $sdir/mismatches.txt.
solve_again() {
	local n=$1 from=$2
	shift 2
	if [ "$n" -eq 0 ] || [ "$n" -ge "$(wc -l <"$sdir/export.txt")" ]; then
		cp "$sdir/export.txt" "$sdir/check.txt"
	elif [ -n "$from" ]; then
		shuf -n "$n" --random-source=<(yes "$from") "$sdir/export.txt" >"$sdir/check.txt"
	else
		shuf -n "$n" "$sdir/export.txt" >"$sdir/check.txt"
	fi
	"$c4book" solve "$@" <"$sdir/check.txt" >"$sdir/solved.txt" 2>"$sdir/solve.log" ||
		fail "c4book solve failed on the export's positions (see $sdir/solve.log)"
	paste -d ' ' "$sdir/check.txt" "$sdir/solved.txt" | awk '$1 != $3 || $2 != $4' >"$sdir/mismatches.txt"
	mismatches=$(wc -l <"$sdir/mismatches.txt")
}
