// ONNX proto builders for tests.
#include "tests/util/onnx_builder.h"

namespace testing_util {

onnx::ValueInfoProto TensorInfo(const std::string& name, std::vector<std::variant<int64_t, std::string>> dims,
                                int elem_type) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* t = info.mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* v = std::get_if<int64_t>(&d)) {
      if (*v >= 0) dim->set_dim_value(*v);
    } else {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
  return info;
}

onnx::NodeProto MakeNode(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                         const std::string& name) {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_name(name);
  for (auto& s : inputs) node.add_input(s);
  for (auto& s : outputs) node.add_output(s);
  return node;
}

namespace {
onnx::AttributeProto* NewAttr(onnx::NodeProto& node, const std::string& name,
                              onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}
}  // namespace

void SetIntAttr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  NewAttr(node, name, onnx::AttributeProto::INT)->set_i(value);
}
void SetFloatAttr(onnx::NodeProto& node, const std::string& name, float value) {
  NewAttr(node, name, onnx::AttributeProto::FLOAT)->set_f(value);
}
void SetIntsAttr(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values) {
  auto* a = NewAttr(node, name, onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}
void SetFloatsAttr(onnx::NodeProto& node, const std::string& name, std::vector<float> values) {
  auto* a = NewAttr(node, name, onnx::AttributeProto::FLOATS);
  for (float v : values) a->add_floats(v);
}
void SetStringAttr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  NewAttr(node, name, onnx::AttributeProto::STRING)->set_s(value);
}

onnx::ModelProto MakeModel(int opset) {
  onnx::ModelProto model;
  model.set_ir_version(opset >= 13 ? 8 : 3);
  auto* import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  model.mutable_graph()->set_name("test");
  return model;
}

void AddInitializer(onnx::ModelProto& model, const std::string& name, std::vector<int64_t> dims, float fill) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  AddFloatInitializer(model, name, dims, std::vector<float>(static_cast<size_t>(n), fill));
}

void AddFloatInitializer(onnx::ModelProto& model, const std::string& name, const std::vector<int64_t>& dims,
                         const std::vector<float>& values) {
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

std::vector<std::variant<int64_t, std::string>> StaticDims(const std::vector<int64_t>& dims) {
  return {dims.begin(), dims.end()};
}

void AddInt64Initializer(onnx::ModelProto& model, const std::string& name, const std::vector<int64_t>& values,
                         bool scalar) {
  auto* t = model.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

void AddConvPrefix(onnx::ModelProto& model, const std::string& input, int64_t in_channels, const std::string& output,
                   int64_t out_channels) {
  std::vector<float> w(static_cast<size_t>(out_channels * in_channels * 9));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 37) % 17) / 17.0f - 0.5f;
  const std::string weights = output + "_w";
  AddFloatInitializer(model, weights, {out_channels, in_channels, 3, 3}, w);
  onnx::NodeProto conv = MakeNode("Conv", {input, weights}, {output}, output + "_conv");
  SetIntsAttr(conv, "pads", {1, 1, 1, 1});
  *model.mutable_graph()->add_node() = conv;
}

}  // namespace testing_util
