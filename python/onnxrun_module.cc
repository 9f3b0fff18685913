// The Python module `onnxrun` (pybind11 from Debian, built by Bazel as python/onnxrun.so):
//   s = onnxrun.Session("model.onnx", device="auto", precision="fp32")
//   s.inputs, s.outputs      -> [{"name", "dtype" (numpy's name), "shape" (ints; str for named dims)}]
//   s.run({"x": array})      -> {"y": array}   (numpy arrays in, numpy arrays out; copies)
//   s.explain()              -> the plan as a dict (the schema of `onnxrun --explain=json`)
//   s.device                 -> "cpu" or "cuda"
// Every absl::Status error raises onnxrun.Error (a RuntimeError) with the Status message; Run
// releases the GIL, so several Python threads may run one Session at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "partitioner/explain.h"
#include "runtime/session.h"

namespace py = pybind11;

namespace {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void ThrowIfError(const absl::Status& status) {
  if (!status.ok()) throw Error(std::string(status.message()));
}

// numpy's name of each dtype the module exchanges.
const std::vector<std::pair<ir::DType, const char*>>& DTypeNames() {
  static const auto* names = new std::vector<std::pair<ir::DType, const char*>>{
      {ir::DType::kFloat32, "float32"}, {ir::DType::kFloat64, "float64"}, {ir::DType::kFloat16, "float16"},
      {ir::DType::kInt8, "int8"},       {ir::DType::kInt16, "int16"},     {ir::DType::kInt32, "int32"},
      {ir::DType::kInt64, "int64"},     {ir::DType::kUint8, "uint8"},     {ir::DType::kUint16, "uint16"},
      {ir::DType::kUint32, "uint32"},   {ir::DType::kUint64, "uint64"},   {ir::DType::kBool, "bool"}};
  return *names;
}

const char* NumpyName(ir::DType dtype) {
  for (const auto& [d, name] : DTypeNames()) {
    if (d == dtype) return name;
  }
  throw Error("dtype " + ir::DTypeName(dtype) + " has no numpy counterpart here");
}

ir::DType FromNumpy(const py::dtype& dtype) {
  for (const auto& [d, name] : DTypeNames()) {
    if (dtype.is(py::dtype(name))) return d;
  }
  throw Error("numpy dtype " + py::repr(dtype).cast<std::string>() + " is not supported");
}

py::list Infos(const std::vector<runtime::TensorInfo>& infos) {
  py::list out;
  for (const runtime::TensorInfo& info : infos) {
    py::dict d;
    d["name"] = info.name;
    d["dtype"] = info.type.is_tensor() ? py::str(NumpyName(info.type.dtype)) : py::str("non-tensor");
    py::object shape = py::none();
    if (info.type.shape) {
      py::list dims;
      for (const ir::Dim& dim : *info.type.shape) {
        dims.append(dim.known() ? py::object(py::int_(dim.value)) : py::object(py::str(dim.ToString())));
      }
      shape = dims;
    }
    d["shape"] = shape;
    out.append(d);
  }
  return out;
}

class PySession {
 public:
  PySession(const std::string& path, const std::string& device, const std::string& precision) {
    runtime::SessionOptions options;
    if (device == "cpu") {
      options.device = runtime::Device::kCpu;
    } else if (device == "cuda") {
      options.device = runtime::Device::kCuda;
    } else if (device != "auto") {
      throw Error("device must be auto, cpu or cuda, not " + device);
    }
    options.precision = precision;
    absl::StatusOr<std::unique_ptr<runtime::Session>> session = runtime::Session::Create(path, options);
    ThrowIfError(session.status());
    session_ = *std::move(session);
  }

  py::dict Run(const py::dict& feeds) const {
    std::vector<runtime::NamedTensor> inputs;
    for (const auto& [key, value] : feeds) {
      py::array array = py::array::ensure(value, py::array::c_style);
      if (!array) throw Error("input '" + std::string(py::str(key)) + "' is not an array");
      std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
      absl::StatusOr<ir::Tensor> tensor = ir::Tensor::Create(FromNumpy(array.dtype()), dims);
      ThrowIfError(tensor.status());
      if (tensor->byte_size() > 0) std::memcpy(tensor->raw_data(), array.data(), tensor->byte_size());
      inputs.push_back({std::string(py::str(key)), *std::move(tensor)});
    }
    absl::StatusOr<std::vector<runtime::NamedTensor>> outputs;
    {
      py::gil_scoped_release release;
      outputs = session_->Run(inputs);
    }
    ThrowIfError(outputs.status());
    py::dict result;
    for (const runtime::NamedTensor& out : *outputs) {
      if (!out.tensor.is_dense()) throw Error("output '" + out.name + "' is not a tensor");
      result[py::str(out.name)] = py::array(py::dtype(NumpyName(out.tensor.dtype())), out.tensor.shape(),
                                            out.tensor.raw_data());  // copies
    }
    return result;
  }

  py::object Explain() const {
    return py::module_::import("json").attr("loads")(partitioner::ExplainJson(session_->plan()));
  }

  py::list inputs() const { return Infos(session_->inputs()); }
  py::list outputs() const { return Infos(session_->outputs()); }
  std::string device() const { return runtime::DeviceName(session_->device()); }

 private:
  std::unique_ptr<runtime::Session> session_;
};

}  // namespace

PYBIND11_MODULE(onnxrun, m) {
  m.doc() = "onnxrun: run ONNX models on NVIDIA GPUs (cuDNN fused graphs) or the CPU";
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, const std::string&, const std::string&>(), py::arg("path"),
           py::arg("device") = "auto", py::arg("precision") = "fp32")
      .def("run", &PySession::Run, py::arg("feeds"), "run({name: numpy array}) -> {name: numpy array}")
      .def("explain", &PySession::Explain, "the plan as a dict (the schema of `onnxrun --explain=json`)")
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("outputs", &PySession::outputs)
      .def_property_readonly("device", &PySession::device);
}
