"""Converts Keras models (random init) with tf2onnx, the way TensorFlow users export, to ONNX in the
test layout with ONNX Runtime's CPU outputs as the reference, for `onnxrun test`: Keras applications
(MobileNetV2/V3, EfficientNetB0/V2B0, DenseNet121, InceptionV3, NASNetMobile, Xception, ResNet50V2;
NHWC inputs, tf2onnx's transposes) and small models of LSTM/GRU, Conv2DTranspose, BatchNormalization,
bilinear UpSampling2D, SeparableConv2D with swish and GlobalMaxPooling2D.

Not part of the build or CI. Needs TensorFlow and tf2onnx from PyPI (a venv of its own):

  python3 -m venv /tmp/tf && /tmp/tf/bin/pip install tensorflow-cpu tf2onnx onnxruntime "numpy<2"
  /tmp/tf/bin/python models/sweep/export_keras.py OUT_DIR [name,name,...]
  bazel-bin/cli/onnxrun test --device cpu OUT_DIR
"""

import os
import sys

import numpy as np
import onnx
import onnxruntime
import tensorflow as tf
import tf2onnx
from sweep_io import run_cases, write_tensor

APPLICATIONS = {"MobileNetV2": 224, "MobileNetV3Small": 224, "EfficientNetB0": 224, "EfficientNetV2B0": 224,
                "DenseNet121": 224, "InceptionV3": 299, "NASNetMobile": 224, "Xception": 299, "ResNet50V2": 224}


def keras_lstm_gru():
    inputs = tf.keras.Input((12, 8))
    x = tf.keras.layers.GRU(8)(tf.keras.layers.LSTM(16, return_sequences=True)(inputs))
    return tf.keras.Model(inputs, tf.keras.layers.Dense(4, activation="softmax")(x)), (2, 12, 8)


def keras_misc():
    inputs = tf.keras.Input((16, 16, 3))
    x = tf.keras.layers.Conv2DTranspose(8, 3, strides=2, padding="same")(inputs)
    x = tf.keras.layers.UpSampling2D(interpolation="bilinear")(tf.keras.layers.BatchNormalization()(x))
    x = tf.keras.layers.SeparableConv2D(4, 3, padding="same", activation="swish")(x)
    return tf.keras.Model(inputs, tf.keras.layers.GlobalMaxPooling2D()(x)), (2, 16, 16, 3)


SMALL = {"keras_lstm_gru": keras_lstm_gru, "keras_misc": keras_misc}


def build(name):
    if name in SMALL:
        return SMALL[name]()
    side = APPLICATIONS[name]
    return getattr(tf.keras.applications, name)(weights=None, input_shape=(side, side, 3)), (1, side, side, 3)


def export(name, out_dir):
    model, shape = build(name)
    spec = (tf.TensorSpec((None,) + shape[1:], tf.float32, name="input"),)
    proto, _ = tf2onnx.convert.from_keras(model, input_signature=spec, opset=17)
    folder = os.path.join(out_dir, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    onnx.save(proto, path)
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    session = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = session.run(None, {session.get_inputs()[0].name: x})
    write_tensor(os.path.join(folder, "test_data_set_0", "input_0.pb"), x, session.get_inputs()[0].name)
    for k, (o, y) in enumerate(zip(session.get_outputs(), outputs)):
        write_tensor(os.path.join(folder, "test_data_set_0", f"output_{k}.pb"), y, o.name)


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    names = argv[2].split(",") if len(argv) > 2 else list(SMALL) + list(APPLICATIONS)

    def run_one(name):
        tf.random.set_seed(0)
        export(name, argv[1])
        return "converted by tf2onnx at opset 17"

    return run_cases(names, run_one)

if __name__ == "__main__":
    sys.exit(main(sys.argv))
