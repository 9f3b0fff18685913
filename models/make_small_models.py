#!/usr/bin/env python3
"""Builds the small models committed under models/ (seeded random weights) and their reference
outputs computed by ONNX Runtime (CPU), in the ONNX test layout:
  models/<name>/model.onnx, models/<name>/test_data_set_0/{input_0,output_0}.pb
Needs `python3 -m pip install onnx onnxruntime numpy` (test-only tools). Deterministic: rerunning
gives the same files."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def tiny_cnn(rng):
    """Conv-BN-Relu-MaxPool-Conv-Relu-GlobalAveragePool-Flatten-Gemm-Softmax, input [N,3,32,32]."""
    def w(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        w("conv1_w", 8, 3, 3, 3), w("conv1_b", 8),
        w("bn_scale", 8, scale=1.0), w("bn_bias", 8),
        w("bn_mean", 8, scale=0.1),
        numpy_helper.from_array((rng.uniform(0.5, 1.5, 8)).astype(np.float32), "bn_var"),
        w("conv2_w", 16, 8, 3, 3), w("conv2_b", 16),
        w("fc_w", 10, 16), w("fc_b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1_w", "conv1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2_w", "conv2_b"], ["c2"], name="conv2", pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 32, 32])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxrun")
    model.ir_version = 8
    onnx.checker.check_model(model)
    inputs = [rng.standard_normal((2, 3, 32, 32)).astype(np.float32)]
    return model, inputs


def legacy_ops(rng):
    """Opset 8 with the ops ONNX dropped from its experimental set that real exports still carry
    (tiny-yolov2 from the ONNX model zoo starts with ImageScaler; WinMLTools / CoreML conversions
    write Crop, Scale, Affine, ScaledTanh, ParametricSoftplus, DynamicSlice, ThresholdedRelu and the
    attribute form of MeanVarianceNormalization), and tiny-yolov2's stride-1 MaxPool padded at the
    end only. Input [N,3,20,24]. ONNX Runtime runs them as its contrib ops of the default domain."""
    def w(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    def ints(name, values):
        return numpy_helper.from_array(np.array(values, dtype=np.int64), name)

    inits = [
        w("conv_w", 8, 3, 3, 3), w("conv_b", 8),
        w("bn_scale", 8, scale=1.0), w("bn_bias", 8), w("bn_mean", 8, scale=0.1),
        numpy_helper.from_array((rng.uniform(0.5, 1.5, 8)).astype(np.float32), "bn_var"),
        ints("slice_starts", [1, 0]), ints("slice_ends", [9, 11]), ints("slice_axes", [2, 3]),
    ]
    node = helper.make_node
    nodes = [
        node("ImageScaler", ["image"], ["scaled"], name="scaler", scale=0.5, bias=[0.1, -0.2, 0.3]),
        node("Conv", ["scaled", "conv_w", "conv_b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        node("BatchNormalization", ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"], name="bn",
             epsilon=1e-5),
        node("LeakyRelu", ["bn"], ["lr"], name="leaky", alpha=0.1),
        node("MaxPool", ["lr"], ["mp"], name="pool_end_pad", kernel_shape=[2, 2], strides=[1, 1],
             pads=[0, 0, 1, 1]),
        node("Crop", ["mp"], ["crop"], name="crop_border", border=[1, 2, 3, 1]),
        node("Crop", ["crop"], ["crop2"], name="crop_scale", border=[2, 1, 0, 0], scale=[10, 12]),
        node("Affine", ["crop2"], ["affine"], name="affine", alpha=0.7, beta=-0.1),
        node("ScaledTanh", ["affine"], ["tanh"], name="scaled_tanh", alpha=1.5, beta=0.8),
        node("ParametricSoftplus", ["tanh"], ["softplus"], name="softplus", alpha=0.9, beta=1.3),
        node("Scale", ["softplus"], ["x2"], name="scale", scale=2.0),
        node("DynamicSlice", ["x2", "slice_starts", "slice_ends", "slice_axes"], ["sliced"], name="dyn_slice"),
        node("MeanVarianceNormalization", ["sliced"], ["mvn"], name="mvn_channels"),
        node("MeanVarianceNormalization", ["sliced"], ["centred"], name="mvn_mean_only", across_channels=1,
             normalize_variance=0),
        node("Add", ["mvn", "centred"], ["sum"], name="add"),
        node("ThresholdedRelu", ["sum"], ["out"], name="thresholded", alpha=0.2),
    ]
    graph = helper.make_graph(
        nodes, "legacy_ops",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, 20, 24])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 8, 8, 11])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)], producer_name="onnxrun")
    model.ir_version = 4  # no onnx.checker: ONNX has dropped these ops' schemas
    inputs = [rng.standard_normal((2, 3, 20, 24)).astype(np.float32)]
    return model, inputs


def legacy_opset3(rng):
    """Opset 3, as the model zoo's Caffe2-era exports write it: Relu with consumed_inputs,
    Upsample-1 (height_scale / width_scale), Concat without an axis (1 before opset 4), Add with
    broadcast and axis, Reshape with a shape attribute, Gemm with broadcast, Softmax's default axis.
    ONNX Runtime does not load opsets below 7, so the reference outputs come from the same network
    written at opset 13 (returned third). Input [N,3,8,8]."""
    def w(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    weights = [w("w1", 4, 3, 3, 3), w("b1", 4), w("w2", 4, 3, 1, 1), w("b2", 4), w("channel_bias", 8),
               w("fc_w", 10, 512, scale=0.05), w("fc_b", 10)]
    node = helper.make_node
    legacy = [
        node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"], name="relu", consumed_inputs=[0]),
        node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        node("Upsample", ["p1"], ["u1"], name="upsample", height_scale=2.0, width_scale=2.0, mode="nearest"),
        node("Conv", ["x", "w2", "b2"], ["c2"], name="conv2"),
        node("Concat", ["u1", "c2"], ["cat"], name="concat"),
        node("Add", ["cat", "channel_bias"], ["biased"], name="add", broadcast=1, axis=1),
        node("Reshape", ["biased"], ["flat"], name="reshape", shape=[0, -1]),
        node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1, broadcast=1),
        node("Softmax", ["logits"], ["probs"], name="softmax"),
    ]
    modern = [
        node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"], name="relu"),
        node("MaxPool", ["r1"], ["p1"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        node("Resize", ["p1", "", "scales"], ["u1"], name="upsample", mode="nearest",
             coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        node("Conv", ["x", "w2", "b2"], ["c2"], name="conv2"),
        node("Concat", ["u1", "c2"], ["cat"], name="concat", axis=1),
        node("Add", ["cat", "bias_chw"], ["biased"], name="add"),
        node("Reshape", ["biased", "shape"], ["flat"], name="reshape"),
        node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    extra = [numpy_helper.from_array(np.array([1, 1, 2, 2], dtype=np.float32), "scales"),
             numpy_helper.from_array(numpy_helper.to_array(weights[4]).reshape(8, 1, 1), "bias_chw"),
             numpy_helper.from_array(np.array([0, -1], dtype=np.int64), "shape")]
    io = ([helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
          [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])])
    model = helper.make_model(helper.make_graph(legacy, "legacy_opset3", *io, weights),
                              opset_imports=[helper.make_opsetid("", 3)], producer_name="onnxrun")
    model.ir_version = 3
    reference = helper.make_model(helper.make_graph(modern, "legacy_opset3_at_13", *io, weights[:4] + weights[5:] + extra),
                                  opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxrun")
    reference.ir_version = 8
    onnx.checker.check_model(reference)
    return model, [rng.standard_normal((2, 3, 8, 8)).astype(np.float32)], reference


def local_functions(rng):
    """Model-local functions (IR 10), as exporters that do not inline write them: custom.Block calls
    custom.ScaledSilu (x * sigmoid(alpha * x)) with an attribute reference to its own attribute,
    branches on an If whose subgraphs read the function's values, and returns a copy of one input;
    ScaledSilu's alpha has a default (attribute_proto). Input [N,4,6,6]."""
    node = helper.make_node
    alpha_ref = helper.make_attribute_ref("value_float", onnx.AttributeProto.FLOAT, ref_attr_name="alpha")
    constant = node("Constant", [], ["a"])
    constant.attribute.append(alpha_ref)
    silu = helper.make_function(
        "custom", "ScaledSilu", ["x"], ["y"],
        [constant, node("Mul", ["x", "a"], ["t"]), node("Sigmoid", ["t"], ["s"]), node("Mul", ["x", "s"], ["y"])],
        [helper.make_opsetid("", 18)], attribute_protos=[helper.make_attribute("alpha", 0.5)])
    call_silu = node("ScaledSilu", ["c"], ["g"], domain="custom")
    call_silu.attribute.append(helper.make_attribute_ref("alpha", onnx.AttributeProto.FLOAT, ref_attr_name="beta"))
    then_branch = helper.make_graph([node("Relu", ["g"], ["then_out"])], "then", [],
                                    [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, None)])
    else_branch = helper.make_graph([node("Neg", ["g"], ["else_out"])], "else", [],
                                    [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, None)])
    block = helper.make_function(
        "custom", "Block", ["x", "w"], ["y", "skip"],
        [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), call_silu,
         node("ReduceMean", ["x"], ["m"], keepdims=0), node("Constant", [], ["zero"], value_float=0.0),
         node("Greater", ["m", "zero"], ["positive"]),
         node("If", ["positive"], ["branch"], then_branch=then_branch, else_branch=else_branch),
         node("Add", ["branch", "x"], ["y"]), node("Identity", ["x"], ["skip"])],
        [helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)], attributes=["beta"])
    for fn in (silu, block):
        for i, n in enumerate(fn.node):
            n.name = f"{fn.name.lower()}_{i}"
    weights = [numpy_helper.from_array((rng.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32), n)
               for n in ("w1", "w2")]
    nodes = [node("Block", ["image", "w1"], ["y1", "s1"], domain="custom", name="block1", beta=1.5),
             node("Block", ["y1", "w2"], ["y2", "s2"], domain="custom", name="block2"),
             node("Add", ["y2", "s1"], ["sum"], name="add"),
             node("ScaledSilu", ["sum"], ["out"], domain="custom", name="silu", alpha=2.0)]
    graph = helper.make_graph(nodes, "local_functions",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 4, 6, 6])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, ["N", 4, 6, 6])], weights)
    model = helper.make_model(graph, functions=[silu, block], producer_name="onnxrun",
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model, [rng.standard_normal((2, 4, 6, 6)).astype(np.float32)]


def narrow_qdq(rng):
    """The narrow types as quantized exports write them: int4 weights quantized in blocks of 8 along
    the input axis (DequantizeLinear with block_size, opset 21, packed int4 initializers) and uint4
    per output column, a float8e4m3fn activation round trip (QuantizeLinear / DequantizeLinear),
    and a float8e5m2 Cast round trip (opset 21: ONNX Runtime has no kernels for the float4 and int2
    forms of opsets 23-25 to check them against; ONNX's node cases cover those). Input [N, 16]."""
    import ml_dtypes
    node = helper.make_node
    w = rng.standard_normal((16, 8)).astype(np.float32)
    block_scale = (np.abs(w).reshape(2, 8, 8).max(axis=1) / 7).astype(np.float32)  # [2, 8]
    w_int4 = np.clip(np.round(w / np.repeat(block_scale, 8, axis=0)), -8, 7).astype(ml_dtypes.int4)
    column_scale = (np.abs(w).max(axis=0) / 15).astype(np.float32)
    w_uint4 = np.clip(np.round(w / column_scale) + 8, 0, 15).astype(ml_dtypes.uint4)
    inits = [helper.make_tensor("w_int4", TensorProto.INT4, w.shape, w_int4.astype(np.int8).ravel().tolist()),
             numpy_helper.from_array(block_scale, "w_block_scale"),
             helper.make_tensor("w_uint4", TensorProto.UINT4, w.shape, w_uint4.astype(np.uint8).ravel().tolist()),
             numpy_helper.from_array(column_scale, "w_column_scale"),
             helper.make_tensor("w_uint4_zero", TensorProto.UINT4, [8], [8] * 8),
             numpy_helper.from_array(np.array(0.05, np.float32), "act_scale"),
             helper.make_tensor("act_zero", TensorProto.FLOAT8E4M3FN, [], [0.0])]
    nodes = [node("DequantizeLinear", ["w_int4", "w_block_scale"], ["w_blocked"], axis=0, block_size=8),
             node("MatMul", ["x", "w_blocked"], ["y_int4"]),
             node("DequantizeLinear", ["w_uint4", "w_column_scale", "w_uint4_zero"], ["w_columns"], axis=1),
             node("MatMul", ["x", "w_columns"], ["y_uint4"]),
             node("QuantizeLinear", ["y_int4", "act_scale", "act_zero"], ["y_fp8"]),
             node("DequantizeLinear", ["y_fp8", "act_scale"], ["y_fp8_roundtrip"]),
             node("Cast", ["y_uint4"], ["y_e5m2"], to=TensorProto.FLOAT8E5M2),
             node("Cast", ["y_e5m2"], ["y_e5m2_roundtrip"], to=TensorProto.FLOAT)]
    outputs = ["y_int4", "y_uint4", "y_fp8_roundtrip", "y_e5m2_roundtrip"]
    graph = helper.make_graph(nodes, "narrow_qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, ["N", 16 if o.startswith("x") else 8]) for o in outputs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], producer_name="onnxrun")
    model.ir_version = 10
    onnx.checker.check_model(model)
    return model, [rng.standard_normal((4, 16)).astype(np.float32)]


def nhwc_input_cnn(rng):
    """A TensorFlow model as tf2onnx writes it: an NHWC input [N, 24, 24, 3] transposed to NCHW
    before the first conv, Conv-Relu-MaxPool-Conv-Relu, the feature map transposed back to NHWC
    (one output, as detection heads give their maps) and flattened in NHWC order into a MatMul
    classifier (the other output)."""
    def w(name, *shape, scale=0.3):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [w("conv1_w", 8, 3, 3, 3), w("conv1_b", 8), w("conv2_w", 16, 8, 1, 1), w("conv2_b", 16),
             w("fc_w", 12 * 12 * 16, 10, scale=0.05), w("fc_b", 10),
             numpy_helper.from_array(np.array([-1, 12 * 12 * 16], dtype=np.int64), "flat_shape")]
    node = helper.make_node
    nodes = [
        node("Transpose", ["input_1"], ["x_nchw"], name="input_1_to_nchw", perm=[0, 3, 1, 2]),
        node("Conv", ["x_nchw", "conv1_w", "conv1_b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        node("Relu", ["c1"], ["r1"], name="relu1"),
        node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        node("Conv", ["p1", "conv2_w", "conv2_b"], ["c2"], name="conv2"),
        node("Relu", ["c2"], ["r2"], name="relu2"),
        node("Transpose", ["r2"], ["features"], name="features_to_nhwc", perm=[0, 2, 3, 1]),
        node("Reshape", ["features", "flat_shape"], ["flat"], name="flatten"),
        node("MatMul", ["flat", "fc_w"], ["fc"], name="fc"),
        node("Add", ["fc", "fc_b"], ["logits"], name="fc_bias"),
        node("Softmax", ["logits"], ["probs"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "nhwc_input_cnn", [helper.make_tensor_value_info("input_1", TensorProto.FLOAT, ["N", 24, 24, 3])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10]),
         helper.make_tensor_value_info("features", TensorProto.FLOAT, ["N", 12, 12, 16])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="onnxrun")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, [rng.standard_normal((2, 24, 24, 3)).astype(np.float32)]


def save(name, model, inputs, reference=None, optimize=True):
    """`reference`: the model ONNX Runtime computes the expected outputs with (default: `model`);
    `optimize=False` turns ORT's graph optimizations off (they fuse int4 DequantizeLinear + MatMul into
    MatMulNBits, which quantizes the activations too and so is not the model's arithmetic)."""
    import onnxruntime as ort
    folder = os.path.join(HERE, name)
    data = os.path.join(folder, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession((reference or model).SerializeToString(), options, providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(session.get_inputs(), inputs)}
    outputs = session.run(None, feeds)
    for i, x in enumerate(inputs):
        onnx.save_tensor(numpy_helper.from_array(x, session.get_inputs()[i].name),
                         os.path.join(data, f"input_{i}.pb"))
    for i, y in enumerate(outputs):
        onnx.save_tensor(numpy_helper.from_array(y, session.get_outputs()[i].name),
                         os.path.join(data, f"output_{i}.pb"))
    print(f"wrote {folder}")


if __name__ == "__main__":
    save("tiny_cnn", *tiny_cnn(np.random.default_rng(7)))
    save("legacy_ops", *legacy_ops(np.random.default_rng(8)))
    save("legacy_opset3", *legacy_opset3(np.random.default_rng(9)))
    save("local_functions", *local_functions(np.random.default_rng(10)))
    save("narrow_qdq", *narrow_qdq(np.random.default_rng(11)), optimize=False)
    save("nhwc_input_cnn", *nhwc_input_cnn(np.random.default_rng(12)))
