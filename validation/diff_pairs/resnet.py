"""torchvision-style ResNet (torchvision/models/resnet.py BasicBlock, trimmed):
the base of the resnet_* pairs of validation/diff_pairs.py."""
import torch
import torch.nn as nn
import torch.nn.functional as F

WIDTH = 16
NUM_CLASSES = 10


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        out = out + identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, WIDTH, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(WIDTH)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(BasicBlock(WIDTH), BasicBlock(WIDTH))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(WIDTH, NUM_CLASSES)

    def forward(self, x, target):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.layer1(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return F.cross_entropy(x, target)


def model():
    return ResNet()


def example_inputs():
    return (torch.randn(8, 3, 32, 32), torch.randint(0, NUM_CLASSES, (8,)))
