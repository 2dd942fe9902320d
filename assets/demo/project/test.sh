#!/bin/sh
# The calculator's tests: sh test.sh
. ./calc.sh
failed=0
check() {
    if [ "$2" = "$3" ]; then
        echo "ok   $1"
    else
        echo "FAIL $1: got $2, expected $3"
        failed=1
    fi
}
check "add 2 3" "$(add 2 3)" 5
check "add 0 0" "$(add 0 0)" 0
check "add 10 -4" "$(add 10 -4)" 6
if [ "$failed" = 0 ]; then
    echo "All 3 tests passed."
else
    echo "Some tests failed."
    exit 1
fi
