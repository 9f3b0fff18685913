"""The sweep's torchvision cases: classification, segmentation, detection, video and optical flow.

Weights are torchvision's random init (weights=None). Classification models also come as *_rand
variants randomised by models/export_zoo.py's randomise() (BN affine randomised, BN stats calibrated
then perturbed, classifier re-randomised), since plain random init makes several outputs about 0 or
constant. Detection models also come as *_calib variants whose BN running stats are calibrated on a
seeded batch. Names are <arch>[_calib]_op<opset>[_dyn][_rand]; _dyn cases are exported with batch 1
and tested with batch 2.
"""

import os
import sys

import torch
import torch.nn as nn
import torchvision

from cases_common import Case, add_case, generator, image

# Read-only use of the zoo's randomise() from models/export_zoo.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from export_zoo import randomise  # noqa: E402

CASES = {}

CLASSIFIER_KWARGS = {
    "googlenet": dict(aux_logits=False, init_weights=True),
    "inception_v3": dict(aux_logits=False, init_weights=True),
}
CLASSIFIER_SIZE = {"inception_v3": 299}
COMMON_ARCHS = [
    "alexnet", "googlenet", "shufflenet_v2_x1_0", "mnasnet1_0", "regnet_y_400mf", "resnext50_32x4d",
    "wide_resnet50_2", "convnext_tiny", "swin_t", "efficientnet_v2_s", "mobilenet_v3_large",
    "densenet121", "squeezenet1_0", "inception_v3", "vit_b_16", "efficientnet_b0",
]
# (arch, opset, dynamic batch, randomised)
CLASSIFIERS = (
    [(arch, 13, False, False) for arch in COMMON_ARCHS + ["resnet50"]]
    + [(arch, 17, False, False) for arch in
       ("convnext_tiny", "swin_t", "efficientnet_v2_s", "regnet_x_400mf")]
    + [(arch, 17, True, False) for arch in
       ("resnext50_32x4d", "squeezenet1_0", "vit_b_16", "mobilenet_v2", "googlenet")]
    + [(arch, 13, True, False) for arch in ("mobilenet_v3_large", "shufflenet_v2_x1_0")]
    + [(arch, 13, False, True) for arch in COMMON_ARCHS + ["mobilenet_v2"]]
    + [("efficientnet_v2_s", 17, False, True)]
    + [(arch, 17, True, True) for arch in ("vit_b_16", "mobilenet_v3_large", "swin_t")]
)

SEGMENTERS = [
    ("fcn_resnet50", 13, False),
    ("deeplabv3_mobilenet_v3_large", 13, False),
    ("lraspp_mobilenet_v3_large", 13, False),
    ("deeplabv3_mobilenet_v3_large", 17, True),
]

DETECTION_SIZE = 320
RESIZE_TO_320 = dict(min_size=DETECTION_SIZE, max_size=DETECTION_SIZE)
# (arch, opset, constructor kwargs)
DETECTORS = [
    ("fasterrcnn_mobilenet_v3_large_320_fpn", 13, {}),
    ("ssdlite320_mobilenet_v3_large", 13, {}),
    ("retinanet_resnet50_fpn", 13, RESIZE_TO_320),
    ("maskrcnn_resnet50_fpn", 13, RESIZE_TO_320),
    ("keypointrcnn_resnet50_fpn", 13, RESIZE_TO_320),
    ("fasterrcnn_mobilenet_v3_large_320_fpn", 17, {}),
]
CALIBRATED_DETECTORS = [
    ("ssdlite320_mobilenet_v3_large", 13, {}),
    ("fasterrcnn_mobilenet_v3_large_320_fpn", 13, dict(box_score_thresh=0.011)),
    ("ssdlite320_mobilenet_v3_large", 17, {}),
]

VIDEO_MODELS = [("r3d_18", 13), ("mc3_18", 13), ("r2plus1d_18", 13), ("r2plus1d_18", 17)]
RAFT_OPSETS = [13, 16, 17]


def classifier_make(arch, size, randomised):
    def make():
        model = getattr(torchvision.models, arch)(weights=None, **CLASSIFIER_KWARGS.get(arch, {}))
        if randomised:
            randomise(model, 0)
        return model, (image(1, size),)
    return make


def add_classifier(arch, opset, dynamic, randomised):
    size = CLASSIFIER_SIZE.get(arch, 224)
    name = f"{arch}_op{opset}" + ("_dyn" if dynamic else "") + ("_rand" if randomised else "")
    add_case(CASES, name, Case(
        classifier_make(arch, size, randomised), opset, ["input"], ["output"], dynamic_batch=dynamic,
        make_test_inputs=(lambda: (image(2, size),)) if dynamic else None))


def segmenter_make(arch):
    def make():
        model = getattr(torchvision.models.segmentation, arch)(weights=None, weights_backbone=None)
        return model, (image(1),)
    return make


def add_segmenter(arch, opset, dynamic):
    name = f"{arch}_op{opset}" + ("_dyn" if dynamic else "")
    add_case(CASES, name, Case(segmenter_make(arch), opset, ["input"], dynamic_batch=dynamic,
                               make_test_inputs=(lambda: (image(2),)) if dynamic else None))


def calibrate_bn(model):
    """Random init makes mobilenet backbones' features vanish (1e-13 at the SSD heads, so every
    score ties at 1/91): set BN running stats from one seeded batch, as training would."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None  # a cumulative average over the batch
        images = [torch.rand((3, DETECTION_SIZE, DETECTION_SIZE), generator=generator(500 + i))
                  for i in range(4)]
        batch, _ = model.transform(images)
        model.backbone.train()
        model.backbone(batch.tensors)
        for bn in bns:
            bn.momentum = 0.1
    model.eval()


def detector_make(arch, kwargs, calibrated):
    def make():
        model = getattr(torchvision.models.detection, arch)(weights=None, weights_backbone=None,
                                                            **kwargs)
        if calibrated:
            calibrate_bn(model)
        x = torch.rand((3, DETECTION_SIZE, DETECTION_SIZE), generator=generator(99))
        return model, ([x],)
    return make


def add_detector(arch, opset, kwargs, calibrated=False):
    name = f"{arch}_calib_op{opset}" if calibrated else f"{arch}_op{opset}"
    add_case(CASES, name, Case(detector_make(arch, kwargs, calibrated), opset, ["images"]))


def video_make(arch):
    def make():
        model = getattr(torchvision.models.video, arch)(weights=None)
        return model, (torch.randn((1, 3, 8, 112, 112), generator=generator(5)),)
    return make


class RaftFourUpdates(nn.Module):
    """RAFT with 4 refinement iterations instead of 12; outputs the flow after each."""

    def __init__(self, raft):
        super().__init__()
        self.raft = raft

    def forward(self, image1, image2):
        return self.raft(image1, image2, num_flow_updates=4)


def raft_make():
    model = RaftFourUpdates(torchvision.models.optical_flow.raft_small(weights=None))
    image1 = torch.rand((1, 3, 128, 128), generator=generator(7)) * 2 - 1
    image2 = torch.rand((1, 3, 128, 128), generator=generator(8)) * 2 - 1
    return model, (image1, image2)


for args in CLASSIFIERS:
    add_classifier(*args)
for args in SEGMENTERS:
    add_segmenter(*args)
for args in DETECTORS:
    add_detector(*args)
for args in CALIBRATED_DETECTORS:
    add_detector(*args, calibrated=True)
for arch, opset in VIDEO_MODELS:
    add_case(CASES, f"{arch}_op{opset}", Case(video_make(arch), opset, ["input"], ["output"]))
for opset in RAFT_OPSETS:
    add_case(CASES, f"raft_small_op{opset}", Case(raft_make, opset, ["image1", "image2"]))
