#!/usr/bin/env bash
# Builds every fuzz target and runs each one in turn for SECONDS (default 300).
#
#   fuzz/run-all.sh [SECONDS] [TARGET...]
#
# Each target's corpus grows in fuzz/corpus/<target>/ (not committed) and starts from the
# hand-written inputs in fuzz/seeds/<target>/; fuzz/dicts/<target>.dict is used when there is
# one. Crashing inputs land in fuzz/artifacts/<target>/. The libFuzzer output of each run is
# kept in fuzz/logs/<target>.log and a one-line summary per target in fuzz/logs/summary.txt.
# The exit status is non-zero when any target crashed.
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).

set -u
cd "$(dirname "$0")/.." || exit 2

seconds=${1:-300}
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

# The bundled SQLite trips AddressSanitizer's one-definition-rule check (two file-local
# tables with one name in the amalgamation); that is no bug of ours.
export ASAN_OPTIONS="detect_odr_violation=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

nice -n 19 cargo +nightly fuzz build || exit 2

mkdir -p fuzz/logs
summary=fuzz/logs/summary.txt
: >"$summary"
failed=0
for target in "${targets[@]}"; do
    max_len=256
    corpora=("fuzz/corpus/$target")
    [ -d "fuzz/seeds/$target" ] && corpora+=("fuzz/seeds/$target")
    extra_env=()
    case "$target" in
        directive)
            max_len=4096
            corpora+=(tests/fixtures/seed-scripts)
            ;;
        submit_body | stream_frame)
            max_len=4096
            ;;
        job_query)
            max_len=1024
            ;;
        begin)
            # A zone with daylight saving time, so the odd local days are exercised.
            [ -e /usr/share/zoneinfo/Europe/Stockholm ] && extra_env=(TZ=Europe/Stockholm)
            ;;
    esac
    flags=(-max_total_time="$seconds" -max_len="$max_len" -timeout=10 -print_final_stats=1)
    [ -f "fuzz/dicts/$target.dict" ] && flags+=(-dict="fuzz/dicts/$target.dict")
    mkdir -p "fuzz/corpus/$target"

    log="fuzz/logs/$target.log"
    start=$(date +%s)
    env "${extra_env[@]}" nice -n 19 cargo +nightly fuzz run "$target" "${corpora[@]}" -- "${flags[@]}" >"$log" 2>&1
    status=$?
    elapsed=$(($(date +%s) - start))

    execs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log" | tail -n 1)
    if [ -z "$execs" ]; then
        execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
    fi
    corpus=$(find "fuzz/corpus/$target" -type f | wc -l)
    if [ "$status" -eq 0 ]; then
        result="ok"
    else
        result="CRASH (exit $status): $(grep -oE 'fuzz/artifacts/[^ ]+' "$log" | sort -u | tr '\n' ' ')"
        failed=1
    fi
    line=$(printf '%-12s %5ss %12s execs  corpus %5s  %s' "$target" "$elapsed" "${execs:-?}" "$corpus" "$result")
    echo "$line" | tee -a "$summary"
done
exit "$failed"
