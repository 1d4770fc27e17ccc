#!/bin/sh
# Starts the Erlang peer (labctl_peer.beam in the build folder, $1) for one request on stdin.
# erl's scheduler count and process limit are fixed when the VM starts, so they are read from the
# request here: +S threads:threads (threads = schedulers online, the dirty CPU schedulers follow),
# +P sized to the processes the kernel spawns (the default 262,144 is too few for skynet at 1M
# leaves; the largest, 134M, costs 1.6 GB and 6 s to start). labctl_peer parses and validates the
# whole request itself and checks that the VM got the schedulers asked for.
build=$1
request=$(cat)

# The integer after "name": in the request (labctl writes it; a parameter is an integer), else $2.
param() {
    value=$(printf '%s' "$request" | tr -d '\n' |
            sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\([0-9]\{1,12\}\)[^0-9.eE].*/\1/p")
    printf '%s' "${value:-$2}"
}

threads=$(param threads 1)
if [ "$threads" -lt 1 ] || [ "$threads" -gt 1024 ]; then
    echo "labctl-erlang-peer: param threads=$threads out of range [1, 1024]" >&2
    exit 2
fi

# Processes alive at once, at most: skynet's tree (under 2*leaves agents), actor_creation's
# (2^(depth+1) agents), a ring's actors, the senders, Savina's workers, accounts, smokers,
# philosophers, barber's customers (every one alive at once, at most), logmap's computers and
# workers (2*series), bndbuffer's producers and consumers, the chat's clients,
# directories and turns' accumulators and its chats (with invites, at most one per client a turn);
# plus the VM's own.
processes=262144
depth=$(param depth 0)
[ "$depth" -gt 26 ] && depth=26  # past the cap below either way (the kernel allows 24)
clients=$(param clients 0)
chats=0
[ "$(param invite 10)" -gt 0 ] && chats=$((clients * $(param turns 0)))
[ "$chats" -gt 134217727 ] && chats=134217727
chat=$((clients + $(param directories 0) + $(param turns 0) + chats))
for need in $((2 * $(param leaves 0))) $((1 << (depth + 1))) $(param actors 0) $(param senders 0) $(param workers 0) \
            $(param accounts 0) $(param smokers 0) $(param philosophers 0) $(param haircuts 0) \
            $((2 * $(param series 0))) \
            $(($(param producers 0) + $(param consumers 0))) $chat; do
    need=$((need + 1024))
    [ "$need" -gt "$processes" ] && processes=$need
done
[ "$processes" -gt 134217727 ] && processes=134217727

# A crash is reported on stderr in one line (labctl_peer), never as a dump in the peer's folder.
ERL_CRASH_DUMP_SECONDS=0 exec erl -noshell -noinput +S "$threads:$threads" +P "$processes" -pa "$build" \
    -s labctl_peer main -extra "$request"
