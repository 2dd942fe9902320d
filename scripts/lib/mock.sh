# Sourced by scripts/bench-tui and scripts/link-order: the shared scripted
# model service (mock_llm.py, in $bench_dir) on a free loopback port, and a
# MINO_HOME that points mino at it.

# mock_start SCRIPT DIR [OPTION...]: starts the service with its output in
# DIR and sets mock_pid and port; exits saying why when it does not start.
mock_start() {
    local script=$1 dir=$2
    shift 2
    python3 "$bench_dir/mock_llm.py" --port 0 "$@" >"$dir/mock.out" 2>"$dir/mock.err" &
    mock_pid=$!
    port=
    # The service picks a free port and says which on its first line.
    for _ in $(seq 200); do
        port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9][0-9]*\).*|\1|p' "$dir/mock.out")
        [ -n "$port" ] && return 0
        kill -0 "$mock_pid" 2>/dev/null || break
        sleep 0.05
    done
    echo "$script: mock_llm.py did not start:" >&2
    cat "$dir/mock.err" >&2
    exit 1
}

# mock_home DIR PROVIDER: DIR/home (0700) whose config.toml points mino at
# the service on $port over PROVIDER's wire, and an empty DIR/project.
mock_home() {
    mkdir -p "$1/home" "$1/project"
    chmod 700 "$1/home"
    printf '[model]\nprovider = "%s"\nbase_url = "http://127.0.0.1:%s/v1"\nmodel = "mock"\n' \
        "$2" "$port" >"$1/home/config.toml"
}
