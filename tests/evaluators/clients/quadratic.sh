#!/usr/bin/env bash
# A bayestune external-protocol client in bash + awk: parameters x,y; objective value = (x - 3)^2 + y.
# Each request is answered with the parameters echoed, the objective and a Valid column
# (x = 13 is infeasible). Logs go to stderr; stdout carries only the protocol.
while IFS= read -r line; do
    case "$line" in
        End*) exit 0 ;;
        Request*)
            n=${line#Request }
            IFS= read -r header
            echo "request of $n: $header" >&2
            echo "$header,value,Valid"
            for ((i = 0; i < n; i++)); do
                IFS= read -r row
                echo "$row" | awk -F, '{ if ($1 == 13) print $0 ",,False"; else print $0 "," ($1 - 3) ^ 2 + $2 ",True" }'
            done
            ;;
    esac
done
