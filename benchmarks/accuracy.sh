#!/bin/bash
# End-to-end accuracy of the shipped configs with the CLI: train, link the held-out documents,
# evaluate, HRM recall; wall times in RUNS/times.txt. Then: python -m benchmarks collect_accuracy RUNS
# Usage: benchmarks/accuracy.sh [RUNS] [all|camoni|bc5cdr|diabetes|sclerosis|depression] [PIPELINE]
# PIPELINE picks a variant: "transformer" runs configs/pipelines/transformer.yaml on each corpus
# (configs/data/*.yaml); without it, the shipped configs/camoni-*.yaml and configs/bc5cdr.yaml.
cd "$(dirname "$0")/.."
RUNS=${1:-runs}; WHAT=${2:-all}; PIPELINE=${3:-}; mkdir -p "$RUNS"; rm -f "$RUNS/times.txt"
config() {  # the config of corpus $1 (camoni-diabetes, bc5cdr, ...)
  if [ -z "$PIPELINE" ]; then echo "configs/$1.yaml"
  else echo "configs/pipelines/$PIPELINE.yaml --include configs/data/$1.yaml"; fi
}
X=xlnel
for c in diabetes sclerosis depression; do
  [ "$WHAT" = bc5cdr ] && break
  case "$WHAT" in diabetes|sclerosis|depression) [ "$c" = "$WHAT" ] || continue;; esac
  s=$(date +%s.%N)
  $X train $(config camoni-$c) --out $RUNS/$c > $RUNS/$c.train.log 2>&1
  m=$(date +%s.%N)
  $X link $RUNS/$c $RUNS/$c/test.jsonl --out $RUNS/$c-pred.jsonl 2>/dev/null
  e=$(date +%s.%N)
  echo "$c train_s=$(echo "$m-$s"|bc) link_s=$(echo "$e-$m"|bc)" >> $RUNS/times.txt
  $X evaluate $RUNS/$c/test.jsonl $RUNS/$c-pred.jsonl --level span --json > $RUNS/$c.span.json
  $X evaluate $RUNS/$c/test.jsonl $RUNS/$c-pred.jsonl --level overlap --json > $RUNS/$c.overlap.json
  $X candidates $RUNS/$c $RUNS/$c/test.jsonl --json > $RUNS/$c.hrm.json 2>/dev/null
done
case "$WHAT" in camoni|diabetes|sclerosis|depression) echo ALLDONE >> $RUNS/times.txt; exit 0;; esac
s=$(date +%s.%N)
$X train $(config bc5cdr) --out $RUNS/bc5cdr > $RUNS/bc5cdr.train.log 2>&1
m=$(date +%s.%N)
$X link $RUNS/bc5cdr ../shared/data/bc5cdr/dev.pubtator --out $RUNS/bc5cdr-pred.jsonl 2>/dev/null
e=$(date +%s.%N)
echo "bc5cdr train_s=$(echo "$m-$s"|bc) link_s=$(echo "$e-$m"|bc)" >> $RUNS/times.txt
for l in concept span overlap; do $X evaluate ../shared/data/bc5cdr/dev.pubtator $RUNS/bc5cdr-pred.jsonl --level $l --json > $RUNS/bc5cdr.$l.json; done
$X candidates $RUNS/bc5cdr ../shared/data/bc5cdr/dev.pubtator --json > $RUNS/bc5cdr.hrm.json 2>/dev/null
echo ALLDONE >> $RUNS/times.txt
