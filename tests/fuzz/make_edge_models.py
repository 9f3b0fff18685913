#!/usr/bin/env python3
# Writes small ONNX models with extreme attribute and constant values (INT64 min/max, NaN, huge
# scales, empty dims, out-of-range axes and indices) into the folder given as argument: seeds for
# tools/fuzz.sh, which byte mutation alone rarely reaches. Needs python3-onnx and numpy.
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

I64MAX = 2**63 - 1
I64MIN = -(2**63)
OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def model(name, nodes, inputs, outputs, inits=(), opset=13):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    with open(os.path.join(OUT, "edge_" + name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


def x(shape, t=T.FLOAT, n="x"):
    return h.make_tensor_value_info(n, t, shape)


def y(t=T.FLOAT):
    return h.make_tensor_value_info("y", t, None)


def i64(n, v):
    return nh.from_array(np.array(v, dtype=np.int64), n)


def f32(n, v):
    return nh.from_array(np.array(v, dtype=np.float32), n)


model("pad_huge",[h.make_node("Pad",["x","p"],["y"])],[x([2,3])],[y()],[i64("p",[0,0,I64MAX,I64MAX])])
model("pad_neg",[h.make_node("Pad",["x","p"],["y"])],[x([2,3])],[y()],[i64("p",[0,0,-5,-5])])
model("pad_min",[h.make_node("Pad",["x","p"],["y"])],[x([2,3])],[y()],[i64("p",[I64MIN,0,I64MIN,0])])
model("slice_ext",[h.make_node("Slice",["x","s","e","a","st"],["y"])],[x([4,5])],[y()],[i64("s",[I64MIN,I64MAX]),i64("e",[I64MAX,I64MIN]),i64("a",[0,1]),i64("st",[I64MAX,I64MIN])])
model("slice_step0",[h.make_node("Slice",["x","s","e","a","st"],["y"])],[x([4,5])],[y()],[i64("s",[0]),i64("e",[3]),i64("a",[0]),i64("st",[0])])
model("slice_axis_bad",[h.make_node("Slice",["x","s","e","a"],["y"])],[x([4,5])],[y()],[i64("s",[0]),i64("e",[3]),i64("a",[I64MIN])])
model("reshape_bad",[h.make_node("Reshape",["x","s"],["y"])],[x([4,5])],[y()],[i64("s",[-1,-1])])
model("reshape_zero",[h.make_node("Reshape",["x","s"],["y"])],[x([4,5])],[y()],[i64("s",[0,0,0,-1])])
model("reshape_huge",[h.make_node("Reshape",["x","s"],["y"])],[x([4,5])],[y()],[i64("s",[I64MAX,-1])])
model("reshape_div0",[h.make_node("Reshape",["x","s"],["y"])],[x([0,5])],[y()],[i64("s",[0,-1])])
model("reshape_div0b",[h.make_node("Reshape",["x","s"],["y"])],[x([4,5])],[y()],[i64("s",[5,0,-1])])
model("expand_neg",[h.make_node("Expand",["x","s"],["y"])],[x([1,1])],[y()],[i64("s",[-3,I64MAX])])
model("resize_scale",[h.make_node("Resize",["x","","sc"],["y"])],[x([1,1,2,2])],[y()],[f32("sc",[1,1,1e30,1e30])])
model("resize_scale_nan",[h.make_node("Resize",["x","","sc"],["y"])],[x([1,1,2,2])],[y()],[f32("sc",[1,1,float('nan'),-1])])
model("resize_sizes_neg",[h.make_node("Resize",["x","","","sz"],["y"])],[x([1,1,2,2])],[y()],[i64("sz",[1,1,-4,I64MAX])])
model("gather_oob",[h.make_node("Gather",["x","i"],["y"],axis=0)],[x([4,5])],[y()],[i64("i",[I64MAX,I64MIN,-5,4])])
model("gather_axis",[h.make_node("Gather",["x","i"],["y"],axis=I64MIN)],[x([4,5])],[y()],[i64("i",[0])])
model("split_neg",[h.make_node("Split",["x","s"],["y","z"],axis=0)],[x([4,5])],[y(),h.make_tensor_value_info("z",T.FLOAT,None)],[i64("s",[-2,6])])
model("split_huge",[h.make_node("Split",["x","s"],["y","z"],axis=0)],[x([4,5])],[y(),h.make_tensor_value_info("z",T.FLOAT,None)],[i64("s",[I64MAX,I64MIN+4])])
model("transpose_perm",[h.make_node("Transpose",["x"],["y"],perm=[0,0])],[x([4,5])],[y()])
model("transpose_perm2",[h.make_node("Transpose",["x"],["y"],perm=[I64MAX,I64MIN])],[x([4,5])],[y()])
model("concat_axis",[h.make_node("Concat",["x","x"],["y"],axis=I64MIN)],[x([4,5])],[y()])
model("flatten_axis",[h.make_node("Flatten",["x"],["y"],axis=I64MAX)],[x([4,5])],[y()])
model("squeeze_axes",[h.make_node("Squeeze",["x","a"],["y"])],[x([1,5])],[y()],[i64("a",[I64MIN])])
model("unsqueeze_axes",[h.make_node("Unsqueeze",["x","a"],["y"])],[x([1,5])],[y()],[i64("a",[0,0,I64MAX])])
model("d2s_zero",[h.make_node("DepthToSpace",["x"],["y"],blocksize=0)],[x([1,4,2,2])],[y()])
model("d2s_huge",[h.make_node("DepthToSpace",["x"],["y"],blocksize=2**32)],[x([1,4,2,2])],[y()])
model("conv_group0",[h.make_node("Conv",["x","w"],["y"],group=0)],[x([1,2,4,4])],[y()],[f32("w",np.ones((2,2,1,1)))])
model("conv_groupneg",[h.make_node("Conv",["x","w"],["y"],group=-2)],[x([1,2,4,4])],[y()],[f32("w",np.ones((2,1,1,1)))])
model("convT_outpad",[h.make_node("ConvTranspose",["x","w"],["y"],output_padding=[I64MAX,0],strides=[2,2])],[x([1,2,4,4])],[y()],[f32("w",np.ones((2,2,1,1)))])
model("convT_outshape",[h.make_node("ConvTranspose",["x","w"],["y"],output_shape=[I64MAX,-5])],[x([1,2,4,4])],[y()],[f32("w",np.ones((2,2,1,1)))])
model("softmax_axis",[h.make_node("Softmax",["x"],["y"],axis=I64MIN)],[x([4,5])],[y()])
model("reduce_axes",[h.make_node("ReduceMean",["x"],["y"],axes=[I64MIN])],[x([4,5])],[y()])
model("reduce_sum_axes",[h.make_node("ReduceSum",["x","a"],["y"])],[x([4,5])],[y()],[i64("a",[5,-7])])
model("layernorm_axis",[h.make_node("LayerNormalization",["x","s"],["y"],axis=I64MIN)],[x([4,5])],[y()],[f32("s",np.ones(5))])
model("cast_bad",[h.make_node("Cast",["x"],["y"],to=9999)],[x([4,5])],[y()])
model("cast_str",[h.make_node("Cast",["x"],["y"],to=8)],[x([4,5])],[y()])
model("div_int_zero",[h.make_node("Div",["x","d"],["y"])],[x([4],T.INT64)],[y(T.INT64)],[i64("d",[0,-1,0,-1])])
model("div_int_min",[h.make_node("Div",["a","d"],["y"])],[],[y(T.INT64)],[i64("a",[I64MIN]),i64("d",[-1])])
model("pow_int",[h.make_node("Pow",["a","d"],["y"])],[],[y(T.INT64)],[i64("a",[I64MIN,3]),i64("d",[I64MAX,-1])])
model("sum_int",[h.make_node("Sum",["a","a","a"],["y"])],[],[y(T.INT64)],[i64("a",[I64MAX])])
model("abs_neg_int",[h.make_node("Abs",["a"],["y"]),],[],[y(T.INT64)],[i64("a",[I64MIN])])
model("neg_int",[h.make_node("Neg",["a"],["y"]),],[],[y(T.INT64)],[i64("a",[I64MIN])])
model("reducesum_int",[h.make_node("ReduceSum",["a"],["y"],keepdims=0)],[],[y(T.INT64)],[i64("a",[I64MAX,I64MAX])],opset=11)
model("matmul_int",[h.make_node("MatMul",["a","a"],["y"])],[],[y(T.INT64)],[i64("a",[[I64MAX,2],[3,I64MAX]])])
model("clip_int",[h.make_node("Clip",["a","lo","hi"],["y"])],[],[y(T.INT64)],[i64("a",[5]),i64("lo",10),i64("hi",1)])
model("cast_float_int",[h.make_node("Cast",["a"],["y"],to=7)],[],[y(T.INT64)],[f32("a",[1e30,float('nan'),float('inf'),-1e30])])
model("cast_float_int8",[h.make_node("Cast",["a"],["y"],to=3)],[],[y(T.INT8)],[f32("a",[1e30,float('nan'),300,-1e30])])
model("cast_float_u32",[h.make_node("Cast",["x"],["y"],to=12)],[x([4])],[y(T.UINT32)])
model("cast_f16",[h.make_node("Cast",["a"],["y"],to=10)],[],[y(T.FLOAT16)],[f32("a",[1e30,float('nan'),65520,-1e-30])])
model("shape_attr",[h.make_node("Shape",["x"],["y"],start=I64MIN,end=I64MAX)],[x([4,5])],[y(T.INT64)],opset=15)
model("where_bc",[h.make_node("Where",["c","x","x"],["y"])],[x([4,5]),x([3,1],T.BOOL,"c")],[y()])
model("maxpool_idx",[h.make_node("MaxPool",["x"],["y","i"],kernel_shape=[3,3],pads=[5,5,5,5])],[x([1,1,2,2])],[y(),h.make_tensor_value_info("i",T.INT64,None)])
model("avgpool_pad_big",[h.make_node("AveragePool",["x"],["y"],kernel_shape=[1,1],pads=[2**24,0,0,0])],[x([1,1,2,2])],[y()])
model("upsample_scale",[h.make_node("Upsample",["x","sc"],["y"])],[x([1,1,2,2])],[y()],[f32("sc",[1,1,-2,1e20])],opset=9)
model("gemm_bad",[h.make_node("Gemm",["x","x"],["y"],transA=5)],[x([4,5])],[y()])
model("constant_empty",[h.make_node("Constant",[],["y"])],[],[y()])
model("bn_shape",[h.make_node("BatchNormalization",["x","s","s","s","s"],["y"])],[x([1,2,4])],[y()],[f32("s",np.ones(3))])
model("int_inst_norm",[h.make_node("InstanceNormalization",["x","s","s"],["y"])],[x([1,2,0])],[y()],[f32("s",np.ones(2))])
model("gather_runtime",[h.make_node("Gather",["x","i"],["y"],axis=1)],[x([4,2]),x([3],T.INT64,"i")],[y()])
t = onnx.TensorProto()
t.name = "v"
t.data_type = 1
t.dims.extend([2**31, 2**31])
model("hugeconst",[h.make_node("Constant",[],["y"],value=t)],[],[y()])
model("scalar_input_conv",[h.make_node("Conv",["x","w"],["y"])],[x([])],[y()],[f32("w",np.ones((2,2,1,1)))])
model("empty_dims",[h.make_node("Relu",["x"],["y"])],[x([0,5])],[y()])
model("conv_zero_batch",[h.make_node("Conv",["x","w"],["y"])],[x([0,2,4,4])],[y()],[f32("w",np.ones((2,2,1,1)))])
model("conv_zero_ch",[h.make_node("Conv",["x","w"],["y"])],[x([1,0,4,4])],[y()],[f32("w",np.ones((2,0,1,1)))])
model("matmul_zero",[h.make_node("MatMul",["x","w"],["y"])],[x([3,0])],[y()],[f32("w",np.ones((0,4)))])
model("softmax_empty",[h.make_node("Softmax",["x"],["y"])],[x([3,0])],[y()])
model("reducemax_empty",[h.make_node("ReduceMax",["x"],["y"],axes=[1])],[x([3,0])],[y()])
model("globalmax_empty",[h.make_node("GlobalMaxPool",["x"],["y"])],[x([1,2,0,0])],[y()])
model("resize_empty",[h.make_node("Resize",["x","","sc"],["y"],mode="linear")],[x([1,1,0,2])],[y()],[f32("sc",[1,1,2,2])])

# Recurrent, quantization and vision ops: NaN/Inf/huge data-driven coordinates, counts and lengths.
NAN, INF = float("nan"), float("inf")
def typed(n, v, dt): return nh.from_array(np.array(v, dtype=dt), n)
def yt(n, t=T.FLOAT): return h.make_tensor_value_info(n, t, None)
model("nms_nan",[h.make_node("NonMaxSuppression",["b","s","m","i","t"],["y"])],[],[y(T.INT64)],[f32("b",[[[NAN,0,1,1],[0,0,INF,1],[0,0,1,1],[0,0,-INF,NAN]]]),f32("s",[[[NAN,1,0.5,INF]]]),i64("m",[I64MAX]),f32("i",[0.5]),f32("t",[-INF])],opset=11)
model("nms_iou_bad",[h.make_node("NonMaxSuppression",["b","s","m","i"],["y"],center_point_box=1)],[],[y(T.INT64)],[f32("b",np.ones((1,3,4))),f32("s",np.ones((1,2,3))),i64("m",[I64MIN]),f32("i",[NAN])],opset=11)
model("roialign_inf",[h.make_node("RoiAlign",["x","r","bi"],["y"],output_height=2,output_width=2)],[x([1,1,4,4])],[y()],[f32("r",[[0,0,INF,1e30],[NAN,NAN,NAN,NAN]]),i64("bi",[0,0])],opset=16)
model("roialign_batch",[h.make_node("RoiAlign",["x","r","bi"],["y"],mode="max")],[x([1,1,4,4])],[y()],[f32("r",[[0,0,1,1]]),i64("bi",[I64MIN])],opset=16)
model("maxroipool_nan",[h.make_node("MaxRoiPool",["x","r"],["y"],pooled_shape=[2,2],spatial_scale=1e30)],[x([1,1,4,4])],[y()],[f32("r",[[0,NAN,INF,-INF,3e38]])])
model("gridsample_nan",[h.make_node("GridSample",["x","g"],["y"],mode="bicubic",padding_mode="reflection",align_corners=1)],[x([1,1,1,3])],[y()],[f32("g",[[[[NAN,0],[INF,-INF],[1e30,-1e30],[3e38,0.5]]]])],opset=16)
model("gridsample_border",[h.make_node("GridSample",["x","g"],["y"],mode="nearest",padding_mode="border")],[x([1,1,0,3])],[y()],[f32("g",np.zeros((1,2,2,2)))],opset=16)
model("quantize_nan",[h.make_node("QuantizeLinear",["x","s","z"],["y"])],[],[y(T.INT8)],[f32("x",[NAN,INF,-INF,1e38]),f32("s",0),typed("z",3,np.int8)])
model("quantize_axis",[h.make_node("QuantizeLinear",["x","s"],["y"],axis=I64MIN)],[x([2,3])],[y(T.UINT8)],[f32("s",[1,2,3])])
model("dynquant_inf",[h.make_node("DynamicQuantizeLinear",["x"],["y","s","z"])],[],[yt("y",T.UINT8),yt("s"),yt("z",T.UINT8)],[f32("x",[INF,-INF,NAN,1])],opset=11)
model("qlinearconv_scale",[h.make_node("QLinearConv",["x","xs","xz","w","ws","wz","ys","yz"],["y"])],[],[y(T.UINT8)],[typed("x",np.ones((1,2,3,3)),np.uint8),f32("xs",INF),typed("xz",1,np.uint8),typed("w",np.ones((3,2,1,1)),np.uint8),f32("ws",[1,2,NAN]),typed("wz",0,np.uint8),f32("ys",0),typed("yz",0,np.uint8)])
model("lstm_lens",[h.make_node("LSTM",["x","w","r","","l"],["y"],hidden_size=2)],[x([3,1,2])],[y()],[f32("w",np.ones((1,8,2))),f32("r",np.ones((1,8,2))),typed("l",[-7],np.int32)],opset=14)
model("gru_empty",[h.make_node("GRU",["x","w","r"],["y","z"],direction="bidirectional",clip=1e-30)],[x([0,2,2])],[y(),yt("z")],[f32("w",np.ones((2,6,2))),f32("r",np.ones((2,6,2)))],opset=14)
model("rnn_hidden",[h.make_node("RNN",["x","w","r"],["y"],hidden_size=I64MAX,activations=["Affine"],activation_alpha=[INF])],[x([3,1,2])],[y()],[f32("w",np.ones((1,4,2))),f32("r",np.ones((1,4,4)))],opset=14)
model("lppool_p",[h.make_node("LpPool",["x"],["y"],kernel_shape=[2],p=1000)],[],[y()],[f32("x",[[[1e30,-3,0,NAN]]])],opset=18)

# Control flow: a trip count of 2^63-1 (fails before running), a Scan axis out of range, If nesting.
_body = h.make_graph([h.make_node("Identity",["c"],["co"]),h.make_node("Add",["s","s"],["so"])],"b",[x([],T.INT64,"i"),x([],T.BOOL,"c"),x([2],n="s")],[x([],T.BOOL,"co"),x([2],n="so")])
model("loop_trip_max",[h.make_node("Loop",["m","","x"],["y"],body=_body)],[x([2])],[y()],[i64("m",I64MAX)])
_scan = h.make_graph([h.make_node("Add",["s","e"],["so"])],"b",[x([2],n="s"),x([2],n="e")],[x([2],n="so")])
model("scan_axis",[h.make_node("Scan",["x","x"],["y"],body=_scan,num_scan_inputs=1,scan_input_axes=[I64MIN])],[x([2])],[y()])
_leaf = h.make_graph([h.make_node("Identity",["x"],["o"])],"l",[],[x([2],n="o")])
_nest = _leaf
for _d in range(12):
    _nest = h.make_graph([h.make_node("If",["c"],["o%d" % _d],then_branch=_nest,else_branch=_leaf)],"n",[],[x([2],n="o%d" % _d)])
model("if_nest",_nest.node,[x([],T.BOOL,"c"),x([2])],[h.make_tensor_value_info("o11",T.FLOAT,None)])

# Sequences and optionals: positions out of range, empty sequences, bad split lengths, an optional
# read while empty, and a loop that grows a sequence until the length cap stops it.
def seq_t(n, t=T.FLOAT): return h.make_tensor_sequence_value_info(n, t, None)
model("seq_insert_pos",[h.make_node("SequenceConstruct",["x"],["s"]),h.make_node("SequenceInsert",["s","x","p"],["t"]),h.make_node("SequenceAt",["t","p"],["y"])],[x([2])],[y()],[i64("p",I64MAX)],opset=11)
model("seq_at_empty",[h.make_node("SequenceEmpty",[],["s"]),h.make_node("SequenceAt",["s","p"],["y"])],[],[y()],[i64("p",I64MIN)],opset=11)
model("seq_erase_empty",[h.make_node("SequenceEmpty",[],["s"]),h.make_node("SequenceErase",["s"],["t"]),h.make_node("ConcatFromSequence",["t"],["y"],axis=0)],[],[y()],opset=11)
model("seq_split_zero",[h.make_node("SplitToSequence",["x","n"],["s"]),h.make_node("ConcatFromSequence",["s"],["y"],axis=I64MIN,new_axis=1)],[x([4,5])],[y()],[i64("n",0)],opset=11)
model("seq_split_neg",[h.make_node("SplitToSequence",["x","n"],["s"],axis=I64MAX),h.make_node("SequenceLength",["s"],["y"])],[x([4,5])],[y(T.INT64)],[i64("n",[-1,5])],opset=11)
model("seq_concat_ranks",[h.make_node("SequenceConstruct",["x","c"],["s"]),h.make_node("ConcatFromSequence",["s"],["y"],axis=0)],[x([2])],[y()],[f32("c",np.ones((2,2)))],opset=11)
model("optional_none_get",[h.make_node("Optional",[],["o"],type=h.make_tensor_type_proto(T.FLOAT,[2])),h.make_node("OptionalGetElement",["o"],["y"])],[],[y()],opset=15)
model("optional_no_type",[h.make_node("Optional",[],["o"]),h.make_node("OptionalHasElement",["o"],["y"])],[],[y(T.BOOL)],opset=15)
_grow = h.make_graph([h.make_node("Identity",["c"],["co"]),h.make_node("SequenceInsert",["s","e"],["so"])],"g",[x([],T.INT64,"i"),x([],T.BOOL,"c"),seq_t("s")],[x([],T.BOOL,"co"),seq_t("so")])
model("loop_seq_grow",[h.make_node("SequenceEmpty",[],["s0"]),h.make_node("Loop",["m","","s0"],["s"],body=_grow),h.make_node("SequenceLength",["s"],["y"])],[],[y(T.INT64)],[i64("m",2**20),f32("e",[1.0])],opset=13)

# Random ops: a huge generated shape, a probability outside [0, 1] or NaN, a huge sample count,
# logits of -inf and NaN, a seed of NaN.
model("random_normal_huge",[h.make_node("RandomNormal",[],["y"],shape=[I64MAX,2])],[],[y()],opset=15)
model("random_uniform_neg",[h.make_node("RandomUniform",[],["y"],shape=[-1],seed=NAN)],[],[y()],opset=15)
model("bernoulli_range",[h.make_node("Bernoulli",["p"],["y"])],[],[y()],[f32("p",[2.0,NAN,-1.0])],opset=15)
model("multinomial_huge",[h.make_node("Multinomial",["l"],["y"],sample_size=I64MAX)],[],[y(T.INT32)],[f32("l",[[-INF,-INF],[NAN,0]])],opset=15)
model("random_like_dtype",[h.make_node("RandomUniformLike",["x"],["y"],dtype=T.INT64,high=INF)],[x([2])],[y(T.INT64)],opset=15)
