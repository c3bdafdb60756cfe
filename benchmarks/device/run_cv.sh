# Cross-validated accuracy (benchmarks/cv_accuracy.py) of the shipped configs with the filter of
# configs/pipelines/transformer.yaml, on a lent GPU: one process per NAME (diabetes, sclerosis,
# depression, bc5cdr), all on the one GPU, each stopped after LIMIT seconds; when every NAME has
# finished, one last call gathers them into benchmarks/results/cv_accuracy_gpu.json. The folds
# and summaries finished so far are in $W/work; carried back as .carry/work, a later call resumes
# from them (the protocol scores are skipped: they would need the fold filters again).
# Usage (after `source benchmarks/device/setup.sh`): bash benchmarks/device/run_cv.sh LIMIT NAME...
# (WORKERS: candidate workers per process, THREADS: its OpenMP threads; 4 each by default).
limit=$1; shift
W=${W:-/tmp/w}; mkdir -p "$W"
[ -d .carry/work ] && [ ! -d "$W/work" ] && cp -r .carry/work "$W/work"
args=(--filter configs/pipelines/transformer.yaml --no-protocol --name cv_accuracy_gpu
      --work "$W/work" --cache "$W/cache" --set "candidates.workers=${WORKERS:-4}")
for n in "$@"; do
  ( OMP_NUM_THREADS=${THREADS:-4} timeout "$limit" python -m benchmarks cv_accuracy "${args[@]}" "$n" \
      > "$W/$n.log" 2>&1; echo "$n rc=$?" >> "$W/rc.txt" ) &
done
wait
for n in diabetes sclerosis depression bc5cdr; do
  [ -f "$W/work/$n/summary.json" ] || { echo "not finished: $n"; exit 0; }
done
python -m benchmarks cv_accuracy "${args[@]}" diabetes sclerosis depression bc5cdr
