#!/usr/bin/env bash
# cmp.sh MODEL BATCH...: step time / MFU (H100-SXM, fp32, Adam) and the peak under --kernels cpu (MiB) of
# out/MODEL.fx.json, out/MODEL.onnx (dynamo) and out/MODEL_ts.onnx (TorchScript), for each graphlint in
# $GRAPHLINTS (default: main's and this checkout's build). docs/validation.md, issue 42.
m=$1; shift
for b in "$@"; do for gl in ${GRAPHLINTS:-/work/main/build/tools/graphlint build/tools/graphlint}; do
  line="b=$b $gl"
  for f in out/$m.fx.json out/$m.onnx out/${m}_ts.onnx; do
    s=$($gl $f --train -D batch=$b --format json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin)['files'][0]; print('%.3f/%.1f%%' % (d['communication']['step_time_s']*1e3, 100*d['communication']['mfu']))")
    p=$($gl $f --train --kernels cpu -D batch=$b --format json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin)['files'][0]; print('%.2f' % (d['memory']['peak_allocated_bytes']/2**20))")
    line="$line | $s $p"
  done; echo "$line"; done; done
