# Cross-validated accuracy (benchmarks/cv_accuracy.py) of one cross-validated NAME (a Camoni
# community or bc5cdr-train) with the filter of configs/pipelines/transformer.yaml on a lent GPU,
# its folds side by side: one process per fold (cv_accuracy --fold-ids), each with its own work
# folder and stage cache and stopped after LIMIT seconds; when every fold has finished, their
# runs.jsonl files are joined and one last call gathers them into benchmarks/results/RESULT.json
# (default cv_accuracy_gpu) without training again. The joined runs.jsonl is copied to $OUT.
# Usage (after `source benchmarks/device/setup.sh`): bash benchmarks/device/run_cv_folds.sh LIMIT NAME [RESULT]
# (FILTER: the pipeline file whose filter runs, configs/pipelines/transformer.yaml by default,
# empty for the shipped configs' own; SHIPPED_PREFILTER=1: its cascade's prefilter takes the
# options of the shipped config's own filter (cv_accuracy --shipped-prefilter); FOLDS: 5 by
# default; WORKERS: candidate workers per process, 1 by default; THREADS: its OpenMP threads, 3
# by default).
limit=$1 name=$2 result=${3:-cv_accuracy_gpu} folds=${FOLDS:-5}
W=${W:-/tmp/w}; mkdir -p "$W/work/$name"
filter=${FILTER-configs/pipelines/transformer.yaml}
args=(${filter:+--filter "$filter"} ${SHIPPED_PREFILTER:+--shipped-prefilter} --no-protocol
      --folds "$folds" --set "candidates.workers=${WORKERS:-1}")
for ((i = 0; i < folds; i++)); do
  ( OMP_NUM_THREADS=${THREADS:-3} timeout "$limit" python -m benchmarks cv_accuracy "${args[@]}" \
      --fold-ids "$i" --work "$W/f$i" --cache "$W/f$i/cache" "$name" > "$W/$name-f$i.log" 2>&1
    echo "fold $i rc=$?" >> "$W/rc.txt" ) &
done
wait
cat "$W/rc.txt"
for ((i = 0; i < folds; i++)); do cat "$W/f$i/$name/runs.jsonl" 2>/dev/null; done \
  > "$W/work/$name/runs.jsonl"
[ -n "$OUT" ] && cp "$W/work/$name/runs.jsonl" "$OUT/$name-runs.jsonl"
done_folds=$(wc -l < "$W/work/$name/runs.jsonl")
[ "$done_folds" -eq "$folds" ] || { echo "not finished: $done_folds of $folds folds"; exit 0; }
python -m benchmarks cv_accuracy "${args[@]}" --work "$W/work" --cache "$W/cache" \
  --name "$result" "$name"
