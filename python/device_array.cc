// DLPack / __cuda_array_interface__ inputs and onnxrun.DeviceArray (see device_array.h).
#include "python/device_array.h"

#include <utility>

#include "python/dlpack_abi.h"

namespace py = pybind11;

namespace onnxrun_py {
namespace {

// The DLPack protocol's number for a stream: 1 is the legacy default stream.
int64_t ProtocolStream(int64_t stream) { return stream == 0 ? 1 : stream; }
void* StreamPointer(int64_t protocol_stream) {
  return protocol_stream == 1 ? nullptr : reinterpret_cast<void*>(protocol_stream);
}

// Row-major compact strides for `dims` (size-1 dims may have any stride).
bool IsCompact(const std::vector<int64_t>& dims, const int64_t* strides) {
  if (strides == nullptr) return true;
  int64_t expected = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    if (dims[d] != 1 && strides[d] != expected) return false;
    expected *= dims[d];
  }
  return true;
}

void FromDlpack(const std::string& name, const py::handle& value, int device_id, int64_t stream, DeviceInput& in) {
  in.keep = value.attr("__dlpack__")(py::arg("stream") = ProtocolStream(stream));
  auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(in.keep.ptr(), dlpack::kCapsuleName));
  if (managed == nullptr) throw Error("input '" + name + "': __dlpack__ did not return a DLPack capsule");
  const dlpack::Tensor& t = managed->dl_tensor;
  if (t.device.device_type != dlpack::kCuda || t.device.device_id != device_id) {
    throw Error("input '" + name + "' is not on CUDA device " + std::to_string(device_id));
  }
  const DTypeEntry* entry = t.dtype.lanes == 1 ? EntryOfDlpack(t.dtype.code, t.dtype.bits) : nullptr;
  if (entry == nullptr) throw Error("input '" + name + "' has a DLPack dtype onnxrun does not take");
  in.dims.assign(t.shape, t.shape + t.ndim);
  if (!IsCompact(in.dims, t.strides)) throw Error("input '" + name + "' is not contiguous (make it .contiguous())");
  in.view.dtype = static_cast<OnnxrunDType>(entry->onnxrun);
  in.view.data = static_cast<char*>(t.data) + t.byte_offset;
}

void FromCudaArrayInterface(const std::string& name, const py::handle& value, DeviceInput& in) {
  in.keep = py::reinterpret_borrow<py::object>(value);
  py::dict cai = value.attr("__cuda_array_interface__");
  const DTypeEntry* entry = EntryOfTypestr(py::str(cai["typestr"]));
  if (entry == nullptr) throw Error("input '" + name + "' has a typestr onnxrun does not take");
  for (const py::handle& d : py::tuple(cai["shape"])) in.dims.push_back(d.cast<int64_t>());
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    std::vector<int64_t> strides;
    for (const py::handle& s : py::tuple(cai["strides"])) strides.push_back(s.cast<int64_t>() / (entry->bits / 8));
    if (!IsCompact(in.dims, strides.data())) throw Error("input '" + name + "' is not contiguous");
  }
  in.view.dtype = static_cast<OnnxrunDType>(entry->onnxrun);
  in.view.data = reinterpret_cast<void*>(py::tuple(cai["data"])[0].cast<uintptr_t>());
}

// What a capsule owns: the values (kept alive) and the shape its tensor points into.
struct Exported {
  SharedValues values;
  std::vector<int64_t> shape;
  dlpack::ManagedTensor managed{};
};

void DeleteCapsule(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, dlpack::kCapsuleName)) return;  // consumed: the consumer deletes
  auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, dlpack::kCapsuleName));
  managed->deleter(managed);
}

}  // namespace

bool IsCudaTensor(const py::handle& value) {
  if (py::hasattr(value, "__dlpack_device__")) {
    py::tuple device = value.attr("__dlpack_device__")();
    return device[0].cast<int>() == dlpack::kCuda;
  }
  return py::hasattr(value, "__cuda_array_interface__");
}

void ToDeviceInput(const std::string& name, const py::handle& value, int device_id, int64_t stream,
                   DeviceInput& input) {
  input.name = name;
  if (py::hasattr(value, "__dlpack__")) {
    FromDlpack(name, value, device_id, stream, input);
  } else {
    FromCudaArrayInterface(name, value, input);
  }
  input.view.name = input.name.c_str();
  input.view.dims = input.dims.data();
  input.view.rank = input.dims.size();
}

OnnxrunTensor DeviceArray::View() const {
  OnnxrunTensor t{};
  Check(onnxrun_values_get(values_.get(), index_, &t));
  return t;
}

py::tuple DeviceArray::shape() const {
  const OnnxrunTensor t = View();
  py::tuple dims(t.rank);
  for (size_t d = 0; d < t.rank; ++d) dims[d] = py::int_(t.dims[d]);
  return dims;
}

std::string DeviceArray::dtype() const {
  const DTypeEntry& entry = EntryOf(View().dtype);
  return *entry.numpy ? entry.numpy : "bfloat16";
}

py::dict DeviceArray::CudaArrayInterface() const {
  const OnnxrunTensor t = View();
  py::dict cai;
  cai["shape"] = shape();
  cai["typestr"] = EntryOf(t.dtype).typestr;
  cai["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(t.data), false);
  cai["strides"] = py::none();
  cai["version"] = 3;
  cai["stream"] = ProtocolStream(stream_);
  return cai;
}

py::tuple DeviceArray::DlpackDevice() const { return py::make_tuple(static_cast<int>(dlpack::kCuda), device_id_); }

py::object DeviceArray::Dlpack(const py::object& stream) const {
  // None means the legacy default stream (1) in the protocol; -1: the consumer does its own sync.
  const int64_t consumer = stream.is_none() ? 1 : stream.cast<int64_t>();
  if (consumer != -1 && consumer != ProtocolStream(stream_)) {
    Check(onnxrun_values_ready_on(values_.get(), StreamPointer(consumer)));
  }
  const OnnxrunTensor t = View();
  const DTypeEntry& entry = EntryOf(t.dtype);
  auto* exported = new Exported{values_, std::vector<int64_t>(t.dims, t.dims + t.rank)};
  dlpack::Tensor& dl = exported->managed.dl_tensor;
  dl.data = const_cast<void*>(t.data);
  dl.device = {dlpack::kCuda, device_id_};
  dl.ndim = static_cast<int32_t>(t.rank);
  dl.dtype = {entry.dlpack_code, entry.bits, 1};
  dl.shape = exported->shape.data();
  dl.strides = nullptr;
  dl.byte_offset = 0;
  exported->managed.manager_ctx = exported;
  exported->managed.deleter = [](dlpack::ManagedTensor* self) { delete static_cast<Exported*>(self->manager_ctx); };
  PyObject* capsule = PyCapsule_New(&exported->managed, dlpack::kCapsuleName, DeleteCapsule);
  if (capsule == nullptr) {
    delete exported;
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

void DeviceArray::Register(py::module_& m) {
  py::class_<DeviceArray>(m, "DeviceArray",
                          "A GPU run's output in device memory: torch.from_dlpack(a), cupy.from_dlpack(a) or "
                          "__cuda_array_interface__ take it without a copy")
      .def_property_readonly("shape", &DeviceArray::shape)
      .def_property_readonly("dtype", &DeviceArray::dtype)
      .def_property_readonly("__cuda_array_interface__", &DeviceArray::CudaArrayInterface)
      .def("__dlpack_device__", &DeviceArray::DlpackDevice)
      .def("__dlpack__", &DeviceArray::Dlpack, py::arg("stream") = py::none());
}

}  // namespace onnxrun_py
