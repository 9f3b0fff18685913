// The Python module `onnxrun` (pybind11 from Debian, built by Bazel as python/onnxrun.so), written
// over the C API (include/onnxrun/onnxrun_c.h) only, so it builds against any CPython's headers:
//   s = onnxrun.Session("model.onnx", device="auto", precision="fp32", device_id=0, config=None)
//                               (config: {"tune_for_streams": 2, ...}, runtime/session_config.h)
//   s.inputs, s.outputs      -> [{"name", "dtype" (numpy's name), "shape" (ints; str for named dims)}]
//   s.run({"x": array})      -> {"y": array}   (numpy arrays in and out; strings as object
//                               arrays of str; ZipMap's sequence of maps as a list of dicts; a
//                               map input, DictVectorizer's or CastMap's, as a dict)
//   s.run({"x": cuda_tensor}, stream=None) -> {"y": onnxrun.DeviceArray}   (device tensors in and
//                               out, no copies: python/device_array.h)
//   s.explain()              -> the plan as a dict (the schema of `onnxrun --explain=json`)
//   s.device                 -> "cpu" or "cuda"
// Every error raises onnxrun.Error (a RuntimeError) with the Status message; run releases the GIL,
// so several Python threads run one Session at once (on the GPU, each on its own context).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "python/device_array.h"
#include "python/module_util.h"

namespace py = pybind11;

namespace onnxrun_py {
namespace {

const std::vector<DTypeEntry>& Table() {
  static const auto* table = new std::vector<DTypeEntry>{
      {ONNXRUN_FLOAT32, "float32", 2, 32, "<f4"}, {ONNXRUN_FLOAT64, "float64", 2, 64, "<f8"},
      {ONNXRUN_FLOAT16, "float16", 2, 16, "<f2"}, {ONNXRUN_BFLOAT16, "", 4, 16, "<V2"},
      {ONNXRUN_INT8, "int8", 0, 8, "|i1"},        {ONNXRUN_INT16, "int16", 0, 16, "<i2"},
      {ONNXRUN_INT32, "int32", 0, 32, "<i4"},     {ONNXRUN_INT64, "int64", 0, 64, "<i8"},
      {ONNXRUN_UINT8, "uint8", 1, 8, "|u1"},      {ONNXRUN_UINT16, "uint16", 1, 16, "<u2"},
      {ONNXRUN_UINT32, "uint32", 1, 32, "<u4"},   {ONNXRUN_UINT64, "uint64", 1, 64, "<u8"},
      {ONNXRUN_BOOL, "bool", 6, 8, "|b1"}};
  return *table;
}

OnnxrunDevice ParseDevice(const std::string& device) {
  if (device == "auto") return ONNXRUN_DEVICE_AUTO;
  if (device == "cpu") return ONNXRUN_DEVICE_CPU;
  if (device == "cuda") return ONNXRUN_DEVICE_CUDA;
  throw Error("device must be auto, cpu or cuda, not " + device);
}

py::dict InfoDict(const OnnxrunTensorInfo& info) {
  py::dict d;
  d["name"] = info.name;
  d["dtype"] = info.dtype == 0 ? "non-tensor" : info.dtype == ONNXRUN_STRING ? "str" : EntryOf(info.dtype).numpy;
  if (info.rank < 0) {
    d["shape"] = py::none();
    return d;
  }
  py::list dims;
  for (int64_t i = 0; i < info.rank; ++i) {
    const std::string name = info.dim_names[i];
    dims.append(info.dims[i] >= 0 ? py::object(py::int_(info.dims[i]))
                                  : py::object(py::str(name.empty() ? "?" : name)));
  }
  d["shape"] = dims;
  return d;
}

bool IsStringArray(const py::array& array) {
  const char kind = array.dtype().kind();
  return kind == 'O' || kind == 'U' || kind == 'S';
}

// The elements of a numpy str / bytes / object array (str or bytes objects) as UTF-8 strings.
std::vector<std::string> StringsOf(const py::array& array) {
  std::vector<std::string> out;
  for (const py::handle item : py::reinterpret_borrow<py::iterable>(array.attr("ravel")().attr("tolist")())) {
    if (!py::isinstance<py::bytes>(item) && !py::isinstance<py::str>(item)) {
      throw Error("a string input holds " + std::string(py::str(item.get_type())) + ", not str or bytes");
    }
    out.push_back(item.cast<std::string>());
  }
  return out;
}

// A host output as a numpy array (a copy): strings as an object array of str.
py::object ToArray(const OnnxrunTensor& out) {
  const std::vector<int64_t> dims(out.dims, out.dims + out.rank);
  if (out.dtype == ONNXRUN_STRING) {
    py::array array(py::dtype("O"), dims);
    py::object flat = array.attr("reshape")(-1);
    const char* const* strings = static_cast<const char* const*>(out.data);
    for (int64_t i = 0; i < py::len(flat); ++i) flat[py::int_(i)] = py::str(strings[i]);
    return std::move(array);
  }
  const DTypeEntry& entry = EntryOf(out.dtype);
  if (*entry.numpy == '\0') throw Error(std::string("output '") + out.name + "' is bfloat16, which numpy lacks");
  return py::array(py::dtype(entry.numpy), dims, out.data);
}

// The host inputs of one run as the C API takes them: numpy arrays (str / bytes / object arrays as
// strings) and dicts (a map input: {str or int: number or str}), with the storage they point into.
struct HostFeeds {
  std::vector<OnnxrunTensor> tensors;
  std::vector<OnnxrunMap> maps;
  std::deque<std::string> names;
  std::deque<py::array> arrays;  // alive through the call
  std::deque<std::vector<int64_t>> dims;
  std::deque<std::vector<std::string>> strings;  // string elements, and their pointers
  std::deque<std::vector<const char*>> string_ptrs;

  void Add(const std::string& name, const py::object& value) {
    names.push_back(name);
    if (py::isinstance<py::dict>(value)) {
      py::dict map = value.cast<py::dict>();
      py::list keys, values;
      for (const auto& [k, v] : map) keys.append(k), values.append(v);
      maps.push_back({names.back().c_str(), ToTensor(ArrayOf(keys, "int64")), ToTensor(ArrayOf(values, nullptr))});
      return;
    }
    tensors.push_back(ToTensor(py::array::ensure(value, py::array::c_style)));
  }

 private:
  // A list as a 1-D array (an empty one of `empty_dtype`, float64 when null).
  static py::array ArrayOf(const py::list& items, const char* empty_dtype) {
    py::module_ numpy = py::module_::import("numpy");
    if (py::len(items) == 0) return py::array::ensure(numpy.attr("zeros")(0, empty_dtype ? empty_dtype : "float64"));
    return py::array::ensure(numpy.attr("asarray")(items), py::array::c_style);
  }

  OnnxrunTensor ToTensor(py::array array) {
    const char* name = names.back().c_str();
    if (!array) throw Error("input '" + names.back() + "' is not an array or a dict");
    dims.emplace_back(array.shape(), array.shape() + array.ndim());
    if (IsStringArray(array)) {
      strings.push_back(StringsOf(array));
      string_ptrs.emplace_back();
      for (const std::string& e : strings.back()) string_ptrs.back().push_back(e.c_str());
      return {name, ONNXRUN_STRING, dims.back().data(), dims.back().size(), string_ptrs.back().data()};
    }
    const DTypeEntry* entry = EntryOfNumpy(py::str(array.dtype()));
    if (entry == nullptr) {
      throw Error("input '" + names.back() + "': numpy dtype " + std::string(py::str(array.dtype())) +
                  " is not supported");
    }
    arrays.push_back(std::move(array));
    return {name, static_cast<OnnxrunDType>(entry->onnxrun), dims.back().data(), dims.back().size(),
            arrays.back().data()};
  }
};

// A sequence of maps (ZipMap's output) as a list of dicts {label: float}, as ONNX Runtime returns it.
py::list MapsOf(const OnnxrunValues* values, size_t i) {
  size_t count = 0;
  Check(onnxrun_values_map_count(values, i, &count));
  py::list maps;
  for (size_t j = 0; j < count; ++j) {
    OnnxrunTensor keys{}, map_values{};
    Check(onnxrun_values_get_map(values, i, j, &keys, &map_values));
    py::list key_list = ToArray(keys).attr("tolist")(), value_list = ToArray(map_values).attr("tolist")();
    py::dict map;
    for (size_t k = 0; k < key_list.size(); ++k) map[key_list[k]] = value_list[k];
    maps.append(map);
  }
  return maps;
}

class PySession {
 public:
  PySession(const std::string& path, const std::string& device, const std::string& precision, int device_id,
            const py::object& config)
      : device_id_(device_id) {
    OnnxrunOptions options{ParseDevice(device), precision.c_str(), device_id};
    std::vector<std::string> keys, values;  // config: {"tune_for_streams": 2, "cuda_graph": False, ...}
    if (!config.is_none()) {
      for (const auto& item : config.cast<py::dict>()) {
        keys.push_back(py::str(item.first));
        values.push_back(py::isinstance<py::bool_>(item.second) ? (item.second.cast<bool>() ? "1" : "0")
                                                                : std::string(py::str(item.second)));
      }
    }
    std::vector<const char*> key_ptrs, value_ptrs;
    for (size_t i = 0; i < keys.size(); ++i)
      key_ptrs.push_back(keys[i].c_str()), value_ptrs.push_back(values[i].c_str());
    OnnxrunSession* session = nullptr;
    {
      py::gil_scoped_release release;
      OnnxrunStatus* status = onnxrun_session_create_with_config(path.c_str(), &options, key_ptrs.data(),
                                                                 value_ptrs.data(), keys.size(), &session);
      py::gil_scoped_acquire acquire;
      Check(status);
    }
    session_.reset(session);
  }

  py::dict Run(const py::dict& feeds, const py::object& stream) const {
    bool any_device = false, all_device = true;
    for (const auto& item : feeds) {
      const bool on_device = IsCudaTensor(item.second);
      any_device = any_device || on_device;
      all_device = all_device && on_device;
    }
    if (any_device && !all_device) throw Error("inputs must be all numpy arrays or all CUDA tensors");
    if (any_device) return RunDevice(feeds, stream.is_none() ? 0 : stream.cast<int64_t>());
    return RunHost(feeds);
  }

  py::object Explain() const {
    return py::module_::import("json").attr("loads")(onnxrun_session_explain_json(session_.get()));
  }
  py::list inputs() const { return Infos(onnxrun_session_input_count(session_.get()), onnxrun_session_input_info); }
  py::list outputs() const { return Infos(onnxrun_session_output_count(session_.get()), onnxrun_session_output_info); }
  std::string device() const { return onnxrun_session_device(session_.get()); }

 private:
  using InfoFn = OnnxrunStatus* (*)(const OnnxrunSession*, size_t, OnnxrunTensorInfo*);
  py::list Infos(size_t count, InfoFn info_at) const {
    py::list out;
    for (size_t i = 0; i < count; ++i) {
      OnnxrunTensorInfo info{};
      Check(info_at(session_.get(), i, &info));
      out.append(InfoDict(info));
    }
    return out;
  }

  py::dict RunHost(const py::dict& feeds) const {
    HostFeeds host;
    for (const auto& [key, value] : feeds) host.Add(py::str(key), py::reinterpret_borrow<py::object>(value));
    OnnxrunValues* values = nullptr;
    OnnxrunStatus* status;
    {
      py::gil_scoped_release release;
      status = onnxrun_session_run_with_maps(session_.get(), host.tensors.data(), host.tensors.size(), host.maps.data(),
                                             host.maps.size(), &values);
    }
    Check(status);
    SharedValues owned(values, onnxrun_values_free);
    py::dict result;
    for (size_t i = 0; i < onnxrun_values_count(values); ++i) {
      if (onnxrun_values_kind(values, i) == ONNXRUN_VALUE_MAPS) {
        result[py::str(onnxrun_session_output_name(session_.get(), i))] = MapsOf(values, i);
        continue;
      }
      OnnxrunTensor out{};
      Check(onnxrun_values_get(values, i, &out));
      result[py::str(out.name)] = ToArray(out);
    }
    return result;
  }

  py::dict RunDevice(const py::dict& feeds, int64_t stream) const {
    std::deque<DeviceInput> inputs;
    py::list keep;
    std::vector<OnnxrunTensor> tensors;
    for (const auto& [key, value] : feeds) {
      inputs.emplace_back();
      ToDeviceInput(py::str(key), value, device_id_, stream, inputs.back());
      keep.append(inputs.back().keep);
      tensors.push_back(inputs.back().view);
    }
    OnnxrunValues* values = nullptr;
    OnnxrunStatus* status;
    {
      py::gil_scoped_release release;
      status = onnxrun_session_run_device(session_.get(), tensors.data(), tensors.size(),
                                          reinterpret_cast<void*>(stream), &values);
    }
    Check(status);
    SharedValues owned(values, onnxrun_values_free);
    py::dict result;
    for (size_t i = 0; i < onnxrun_values_count(values); ++i) {
      OnnxrunTensor out{};
      Check(onnxrun_values_get(values, i, &out));
      result[py::str(out.name)] = DeviceArray(owned, i, device_id_, stream, keep);
    }
    return result;
  }

  struct SessionFree {
    void operator()(OnnxrunSession* s) const { onnxrun_session_free(s); }
  };
  std::unique_ptr<OnnxrunSession, SessionFree> session_;
  int device_id_;
};

}  // namespace

void Check(OnnxrunStatus* status) {
  if (status == nullptr) return;
  std::string message = onnxrun_status_message(status);
  onnxrun_status_free(status);
  throw Error(message);
}

const DTypeEntry& EntryOf(int onnxrun_dtype) {
  for (const DTypeEntry& e : Table()) {
    if (e.onnxrun == onnxrun_dtype) return e;
  }
  throw Error("dtype " + std::to_string(onnxrun_dtype) + " has no Python counterpart here");
}

const DTypeEntry* EntryOfDlpack(uint8_t code, uint8_t bits) {
  for (const DTypeEntry& e : Table()) {
    if (e.dlpack_code == code && e.bits == bits) return &e;
  }
  return nullptr;
}

const DTypeEntry* EntryOfTypestr(const std::string& typestr) {
  for (const DTypeEntry& e : Table()) {
    if (typestr == e.typestr) return &e;
  }
  return nullptr;
}

const DTypeEntry* EntryOfNumpy(const std::string& name) {
  for (const DTypeEntry& e : Table()) {
    if (*e.numpy && name == e.numpy) return &e;
  }
  return nullptr;
}

}  // namespace onnxrun_py

PYBIND11_MODULE(onnxrun, m) {
  using onnxrun_py::PySession;
  m.doc() = "onnxrun: run ONNX models on NVIDIA GPUs (cuDNN fused graphs) or the CPU";
  m.attr("__version__") = onnxrun_version();
  py::register_exception<onnxrun_py::Error>(m, "Error", PyExc_RuntimeError);
  onnxrun_py::DeviceArray::Register(m);
  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string&, const std::string&, const std::string&, int, const py::object&>(),
           py::arg("path"), py::arg("device") = "auto", py::arg("precision") = "fp32", py::arg("device_id") = 0,
           py::arg("config") = py::none(),
           "config: further settings by name, the CLI's flags without dashes (e.g. {'tune_for_streams': 2, "
           "'cuda_graph': False}; runtime/session_config.h)")
      .def("run", &PySession::Run, py::arg("feeds"), py::arg("stream") = py::none(),
           "run({name: numpy array}) -> {name: numpy array}; run({name: CUDA tensor}, stream=None) -> "
           "{name: DeviceArray}, ordered on `stream` (a cudaStream_t as int; None: the legacy default stream)")
      .def("explain", &PySession::Explain, "the plan as a dict (the schema of `onnxrun --explain=json`)")
      .def_property_readonly("inputs", &PySession::inputs)
      .def_property_readonly("outputs", &PySession::outputs)
      .def_property_readonly("device", &PySession::device);
}
