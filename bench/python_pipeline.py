#!/usr/bin/env python3
"""The Python baseline graphlint is compared with: load the model, run the full
ONNX checker (which includes strict shape inference), then shape inference with
data propagation. Prints the phase times (seconds, in-process, excluding the
interpreter start and `import onnx`) as one JSON line on stdout."""
import json
import sys
import time

t_import = time.perf_counter()
import onnx  # noqa: E402

t0 = time.perf_counter()
model = onnx.load(sys.argv[1])
t1 = time.perf_counter()
onnx.checker.check_model(model, full_check=True)
t2 = time.perf_counter()
inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
t3 = time.perf_counter()
print(json.dumps({
    "onnx": onnx.__version__,
    "import": t0 - t_import,
    "load": t1 - t0,
    "check": t2 - t1,
    "infer": t3 - t2,
    "pipeline": t3 - t0,
    "nodes": len(model.graph.node),
    "value_info": len(inferred.graph.value_info),
}))
