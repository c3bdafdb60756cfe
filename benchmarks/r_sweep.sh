#!/usr/bin/env bash
# The R sweep behind benchmarks/results/r_sweep/: dft.R = 0..0.5 on each Camoni community and on
# BC5CDR dev with the GBDT filter, then `xlnel report`. Run from the repository root:
#   benchmarks/r_sweep.sh [CORPUS...]      (default: diabetes sclerosis depression bc5cdr)
# Environment: SEEDS (default 5; BC5CDR_SEEDS for BC5CDR, default SEEDS), CACHE (stage cache,
# default /tmp/xlnel-r-sweep-cache; keep it out of the repository), XLNEL (the CLI).
# Reruns resume: cells already in a runs.jsonl are skipped. One thread per process: on a small
# machine the GBDT's OpenMP threads only compete with each other.
set -euo pipefail
XLNEL=${XLNEL:-xlnel}
SEEDS=${SEEDS:-5}
CACHE=${CACHE:-/tmp/xlnel-r-sweep-cache}
OUT=benchmarks/results/r_sweep
GRID="dft.R=0,0.1,0.2,0.3,0.4,0.5"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
corpora=("$@")
[ ${#corpora[@]} -eq 0 ] && corpora=(diabetes sclerosis depression bc5cdr)
for corpus in "${corpora[@]}"; do
  if [ "$corpus" = bc5cdr ]; then config=configs/bc5cdr.yaml; seeds=${BC5CDR_SEEDS:-$SEEDS}
  else config=configs/camoni-$corpus.yaml; seeds=$SEEDS; fi
  start=$(date +%s)
  nice -n 10 "$XLNEL" experiment "$config" --grid "$GRID" --seeds "$seeds" \
    --out "$OUT/$corpus" --cache "$CACHE/$corpus"
  echo "$corpus: $(( $(date +%s) - start )) s wall" >&2
done
dirs=()
for c in diabetes sclerosis depression bc5cdr; do [ -f "$OUT/$c/runs.jsonl" ] && dirs+=("$OUT/$c"); done
"$XLNEL" report "${dirs[@]}" --out "$OUT"
"${PYTHON:-python}" benchmarks/r_sweep.py
