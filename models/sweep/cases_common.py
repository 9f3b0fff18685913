"""What the sweep's case modules share: the Case record and seeded input helpers.

A case builds its model and the inputs it is exported with; torch's outputs for the test inputs (the
export inputs unless the case has its own, e.g. a larger batch for a dynamic axis) become the
reference. The driver seeds torch's global RNG before each case, so weights drawn by module init
are reproducible; inputs come from their own seeded generators.
"""

from dataclasses import dataclass
from typing import Callable, Optional

import torch

IMAGE_SEED = 1234


@dataclass
class Case:
    make: Callable  # () -> (model, export inputs tuple)
    opset: int
    input_names: list
    output_names: Optional[list] = None  # None: out_0, out_1, ... in torch's flattened order
    dynamic_axes: Optional[dict] = None
    dynamic_batch: bool = False  # axis 0 of every named input and output is dynamic
    make_test_inputs: Optional[Callable] = None  # () -> inputs tuple; None: the export inputs


def add_case(cases, name, case):
    if name in cases:
        raise ValueError(f"duplicate sweep case {name}")
    cases[name] = case


def generator(seed):
    return torch.Generator().manual_seed(seed)


def randn(*shape, seed):
    return torch.randn(shape, generator=generator(seed))


def image(batch, size=224, seed=IMAGE_SEED):
    return randn(batch, 3, size, size, seed=seed)
