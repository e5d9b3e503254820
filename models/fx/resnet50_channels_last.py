"""torchvision resnet50 (random weights) in channels-last memory format, as
NVIDIA DeepLearningExamples trains it with AMP (`memory_format: nhwc` in
PyTorch/Classification/ConvNets/configs.yml): weights and input NHWC, so the
recorded strides of every activation are channels-last. Batch 7 at 224x224."""
import torch
import torchvision


def model():
    return torchvision.models.resnet50(weights=None).to(memory_format=torch.channels_last)


def example_inputs():
    return (torch.randn(7, 3, 224, 224).contiguous(memory_format=torch.channels_last),)
