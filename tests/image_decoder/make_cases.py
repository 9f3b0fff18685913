"""Writes ImageDecoder test cases in ONNX's test layout, with Pillow's decode as the reference.

    pip install pillow onnx numpy && python3 tests/image_decoder/make_cases.py tests/image_decoder/cases

Each case is one encoded file (a format, color mode or encoding option Pillow writes; the ASCII
PNM forms are written here) decoded by Pillow the way ONNX's reference ImageDecoder reads it:
convert("RGB") for RGB (channels reversed for BGR), convert("L") for Grayscale. onnxrun's output
is always [H, W, 3] or [H, W, 1], so Pillow's 2-D decodes of gray files become 3 equal channels
through convert("RGB").
"""
import io
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper
from PIL import Image

H, W = 29, 37  # odd sizes: padded BMP rows, partial JPEG blocks, partial packed bit bytes


def picture(mode):
    """A smooth gradient with noise and hard edges, in `mode`."""
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:H, 0:W]
    rgb = np.stack([x * 255 // (W - 1), y * 255 // (H - 1), (x + y) * 255 // (H + W - 2)], -1)
    rgb = np.clip(rgb + rng.integers(-20, 21, rgb.shape), 0, 255).astype(np.uint8)
    rgb[5:12, 8:20] = [250, 10, 40]
    image = Image.fromarray(rgb, "RGB")
    if mode == "RGBA":
        image.putalpha(Image.fromarray((x * 7 % 256).astype(np.uint8), "L"))
        return image
    if mode == "P":
        return image.quantize(colors=40)
    return image.convert(mode)


def encode(image, fmt, **options):
    with io.BytesIO() as f:
        image.save(f, format=fmt, **options)
        return f.getvalue()


def ascii_pnm(image, magic):
    """P1 / P2 / P3 (Pillow writes only the binary forms); a comment in the header."""
    pixels = np.array(image).astype(np.int64)
    header = f"{magic}\n# written by make_cases.py\n{image.width} {image.height}\n"
    if magic == "P1":
        values = (pixels == 0).astype(np.int64).ravel()  # Pillow's mode "1": 0 is black, PBM's 1 is black
    else:
        header += "255\n"
        values = pixels.ravel()
    lines = [" ".join(str(v) for v in values[i:i + 17]) for i in range(0, len(values), 17)]
    return (header + "\n".join(lines) + "\n").encode()


CASES = [  # name, picture mode, format, save options (None: ascii_pnm magic)
    ("jpeg_rgb", "RGB", "JPEG", {"quality": 75}),
    ("jpeg_444_q95", "RGB", "JPEG", {"quality": 95, "subsampling": 0}),
    ("jpeg_progressive", "RGB", "JPEG", {"progressive": True}),
    ("jpeg_gray", "L", "JPEG", {}),
    ("png_rgb", "RGB", "PNG", {}),
    ("png_rgba", "RGBA", "PNG", {}),
    ("png_palette", "P", "PNG", {}),
    ("png_gray", "L", "PNG", {}),
    ("png_palette_trns", "P", "PNG", {"transparency": 3}),  # tRNS: libpng would expand it to alpha
    ("png_gray_trns", "L", "PNG", {"transparency": 128}),
    ("png_bilevel", "1", "PNG", {}),
    ("png_interlaced", "RGB", "PNG", {"interlace": 1}),
    ("bmp_rgb", "RGB", "BMP", {}),
    ("bmp_palette", "P", "BMP", {}),
    ("bmp_gray", "L", "BMP", {}),
    ("bmp_bilevel", "1", "BMP", {}),
    ("bmp_rgba", "RGBA", "BMP", {}),
    ("pnm_p6", "RGB", "PPM", {}),
    ("pnm_p5", "L", "PPM", {}),
    ("pnm_p4", "1", "PPM", {}),
    ("pnm_p3", "RGB", None, "P3"),
    ("pnm_p2", "L", None, "P2"),
    ("pnm_p1", "1", None, "P1"),
    ("tiff_rgb", "RGB", "TIFF", {}),
    ("tiff_lzw", "RGB", "TIFF", {"compression": "tiff_lzw"}),
    ("tiff_deflate_gray", "L", "TIFF", {"compression": "tiff_adobe_deflate"}),
    ("tiff_palette", "P", "TIFF", {}),
    ("webp_lossy", "RGB", "WEBP", {"quality": 80}),
    ("webp_lossless", "RGB", "WEBP", {"lossless": True}),
    ("jp2_rgb", "RGB", "JPEG2000", {}),
    ("j2k_codestream_gray", "L", "JPEG2000", {"no_jp2": True}),
]


def write_case(out_dir, name, data, pixel_format):
    image = Image.open(io.BytesIO(data))
    if pixel_format == "Grayscale":
        expected = np.array(image.convert("L"))[:, :, np.newaxis]
    else:
        expected = np.array(image.convert("RGB"))
        if pixel_format == "BGR":
            expected = np.ascontiguousarray(expected[:, :, ::-1])
    node = helper.make_node("ImageDecoder", ["data"], ["image"], pixel_format=pixel_format)
    graph = helper.make_graph(
        [node], f"image_decoder_{name}",
        [helper.make_tensor_value_info("data", onnx.TensorProto.UINT8, [len(data)])],
        [helper.make_tensor_value_info("image", onnx.TensorProto.UINT8, [None, None, expected.shape[2]])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    case = os.path.join(out_dir, f"{name}_{pixel_format.lower()}")
    os.makedirs(os.path.join(case, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(case, "model.onnx"))
    for kind, value in [("input", np.frombuffer(data, np.uint8)), ("output", expected)]:
        tensor = numpy_helper.from_array(value, "data" if kind == "input" else "image")
        with open(os.path.join(case, "test_data_set_0", f"{kind}_0.pb"), "wb") as f:
            f.write(tensor.SerializeToString())


def main(out_dir):
    for name, mode, fmt, options in CASES:
        data = ascii_pnm(picture(mode), options) if fmt is None else encode(picture(mode), fmt, **options)
        formats = ["RGB", "BGR", "Grayscale"] if name == "jpeg_rgb" else ["RGB"]
        if name in ("png_rgba", "png_palette", "bmp_palette", "tiff_palette"):
            formats.append("Grayscale")
        for pixel_format in formats:
            write_case(out_dir, name, data, pixel_format)
    print(f"wrote {len(os.listdir(out_dir))} cases to {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1])
