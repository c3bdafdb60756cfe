# BC5CDR end to end on one config: train on train.pubtator, link dev.pubtator, evaluate at
# concept, span and overlap level; wall times in RUN/times.txt.
# Usage: bash benchmarks/device/run_bc5cdr.sh CONFIG RUN [--set key=value ...]
cfg=$1; R=$2; shift 2; mkdir -p "$R"
t0=$(date +%s.%N)
xlnel train "$cfg" --out "$R/p" "$@" > "$R/train.log" 2>&1 || { echo TRAINFAIL >> "$R/times.txt"; exit 1; }
t1=$(date +%s.%N)
xlnel link "$R/p" ../shared/data/bc5cdr/dev.pubtator --out "$R/pred.jsonl" > "$R/link.log" 2>&1 \
  || { echo LINKFAIL >> "$R/times.txt"; exit 1; }
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN{printf "train_s=%.1f link_s=%.1f\n", b-a, c-b}' >> "$R/times.txt"
for l in concept span overlap; do
  xlnel evaluate ../shared/data/bc5cdr/dev.pubtator "$R/pred.jsonl" --level $l --json > "$R/$l.json"
done
cp "$R/p/train_report.json" "$R/"
echo DONE >> "$R/times.txt"
