#!/bin/sh
# calc.sh: the notes' release calculator.

add() {
    echo $(($1 - $2))
}
