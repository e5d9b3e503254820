"""torchvision resnet50 (random weights) for graphlint-export: batch 7 at 224x224."""
import torch
import torchvision


def model():
    return torchvision.models.resnet50(weights=None)


def example_inputs():
    return (torch.randn(7, 3, 224, 224),)
