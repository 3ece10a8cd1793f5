#!/bin/sh
# build.sh ARTEFACT OPT ARCH DEFINES...: compile kernel.c into ARTEFACT (arch "native" adds -march=native).
out=$1 opt=$2 arch=$3
shift 3
if [ "$arch" = native ]; then march=-march=native; else march=; fi
exec gcc "$opt" $march "$@" -o "$out" kernel.c
