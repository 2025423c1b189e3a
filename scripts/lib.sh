# lib.sh: helpers shared by cluster.sh and chaos.sh, which source it
# (bash). They find or install nats-server, build c4book, start
# nats-server with JetStream and a token, and read the CPU time of a
# process. The caller sets prog (its name, for messages) and tmp (a
# directory of its own, for the build and the Go install) first.

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
# as scripts/nats-server.conf needs).
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
