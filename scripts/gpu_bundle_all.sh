#!/bin/bash
# Everything a GPU bundle proves, in one command on the GPU machine (the
# bundle copies this file as run_all.sh):  bash run_all.sh [OUT_DIR]
#  - the cuDNN runtime's own device test (lib/LstmOptCUDNNDeviceTest);
#  - run.py per variant, each under its own timeout (a hung kernel costs one
#    variant, not the run), merged into gpu_bundle.md/.json;
#  - bench.py (lstm-opt against PyTorch) into gpu_bench.md/.json;
#  - compute-sanitizer memcheck/racecheck on one model per GPU design.
# Environment: VARIANTS (default: every variant built), RUN_TIMEOUT (90 s),
# NOBENCH=1, BENCH_ARGS, BENCH_TIMEOUT (300 s), NOSANITIZE=1, SANITIZE (tool:variant
# list), SAN_TIMEOUT (120 s), THREAD_VARIANTS.
# OUT_DIR (default: here) receives env.txt and reports.tgz.
set -u
cd "$(dirname "$0")"
OUT=${1:-.}
{ nvidia-smi; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  python3 -c "import torch,numpy;print('torch',torch.__version__,'cuda',torch.version.cuda,'cudnn',torch.backends.cudnn.version(),'numpy',numpy.__version__)"
  lscpu | grep -E "Model name|^CPU\(s\)"; } > "$OUT/env.txt" 2>&1
grep -E "NVIDIA|torch|Model name" "$OUT/env.txt" | grep -v "SMI" | head -4
export PYTHONUNBUFFERED=1
if [ -x lib/LstmOptCUDNNDeviceTest ]; then
  CUDNN_DIR=$(python3 -c "import glob,sys;print(([d for p in sys.path for d in glob.glob(p+'/nvidia/cudnn/lib')]+[''])[0])")
  LD_LIBRARY_PATH=$PWD/lib:$CUDNN_DIR timeout 120 lib/LstmOptCUDNNDeviceTest > log-device-test.txt 2>&1
  echo "cudnn device test rc=$? ($(grep -c '^PASS' log-device-test.txt) PASS, $(grep -c '^FAIL' log-device-test.txt) FAIL)"
fi
ALL=$(python3 -c "import json;print(' '.join(dict.fromkeys(e['variant'] for e in json.load(open('bundle.json'))['entries'])))")
for v in ${VARIANTS:-$ALL}; do
  timeout ${RUN_TIMEOUT:-90} python3 run.py --only "$v=" --repeat 20 --out "rep-$v" > "log-$v.txt" 2>&1
  echo "$v rc=$? $(tail -1 "log-$v.txt" | cut -c1-80)"
done
# The same models called from 4 threads at once (shared runtime state).
for v in ${THREAD_VARIANTS:-cudnn-f32 gpu-persistent gpu-persistent-grid gpu-step}; do
  timeout ${RUN_TIMEOUT:-90} python3 run.py --only "$v=" --threads 4 --repeat 3 --out "rep-threads-$v" > "log-threads-$v.txt" 2>&1
  echo "$v x4 threads rc=$? $(tail -1 "log-threads-$v.txt" | cut -c1-60)"
done
python3 run.py --merge $(ls rep-*.json | grep -v rep-threads) --out gpu_bundle > /dev/null; echo "merged: $(grep counts gpu_bundle.md)"
grep -h "| FAILED\|| not built" gpu_bundle.md | cut -c1-250 | head -20
if [ -z "${NOBENCH:-}" ] && [ -f bench.py ]; then
  timeout ${BENCH_TIMEOUT:-300} python3 bench.py --repeat 30 ${BENCH_ARGS:-} > log-bench.txt 2>&1; echo "bench rc=$?"
  grep -E "FAILED" log-bench.txt | head -20
  sed -n '/## Goals/,$p' gpu_bench.md
fi
if [ -z "${NOSANITIZE:-}" ]; then
  for t in ${SANITIZE:-memcheck:gpu-persistent racecheck:gpu-persistent memcheck:gpu-persistent-grid racecheck:gpu-persistent-grid memcheck:gpu-step memcheck:cudnn-f32}; do
    log="log-san-${t%%:*}-${t#*:}.txt"
    timeout ${SAN_TIMEOUT:-120} compute-sanitizer --tool "${t%%:*}" --error-exitcode 3 python3 run.py --only "${t#*:}=" --model torch_nn_lstm --repeat 1 --out san > "$log" 2>&1
    echo "sanitizer $t rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | head -1)"
  done
fi
tar czf "$OUT/reports.tgz" rep-* log-* gpu_bundle.* gpu_bench.* profile-* 2>/dev/null
exit 0
