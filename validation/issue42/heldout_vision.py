# Held-out vision models for docs/validation.md, issue 42 item 7; run beside the shared user-trial files (vision.py).
"""Held-out vision models for issue 42 item 7: torchvision resnet18 and timm efficientnet_b0 with a
cross-entropy loss (vision.WithLoss), exported as FX (graphlint-export), dynamo ONNX and TorchScript ONNX
(train mode preserved: BatchNorm stays), batch dynamic."""
import sys, time, torch, torchvision
sys.path.insert(0, ".")
import vision


def resnet18():
    torch.manual_seed(0)
    return vision.WithLoss(torchvision.models.resnet18(num_classes=100))


def export(name, b=8, r=128):
    x, y = torch.randn(b, 3, r, r), torch.randint(0, 100, (b,))
    batch = torch.export.Dim("batch")
    t0 = time.time()
    factory = globals().get(name) or getattr(vision, name)
    torch.onnx.export(factory().train(), (x, y), "out/%s.onnx" % name, dynamo=True,
                      dynamic_shapes=({0: batch}, {0: batch}), input_names=["x", "y"])
    t1 = time.time()
    torch.onnx.export(factory().train(), (x, y), "out/%s_ts.onnx" % name, dynamo=False,
                      training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False,
                      input_names=["x", "y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    print("%s: dynamo %.1f s, torchscript %.1f s" % (name, t1 - t0, time.time() - t1))


if __name__ == "__main__":
    for n in sys.argv[1:]:
        export(n)
