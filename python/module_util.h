// Shared pieces of the Python module (python/*.cc): the error type, C API statuses as exceptions,
// and the dtype table (onnxrun's numbering, numpy's name, DLPack's code and bits, the
// __cuda_array_interface__ typestr).
#ifndef ONNXRUN_PYTHON_MODULE_UTIL_H_
#define ONNXRUN_PYTHON_MODULE_UTIL_H_

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "onnxrun/onnxrun_c.h"

namespace onnxrun_py {

// Raised as onnxrun.Error (a RuntimeError) with the Status message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws Error for a non-null status (and frees it).
void Check(OnnxrunStatus* status);

struct DTypeEntry {
  int onnxrun;          // OnnxrunDType
  const char* numpy;    // numpy's name ("" when numpy has none)
  uint8_t dlpack_code;  // dlpack::TypeCode
  uint8_t bits;
  const char* typestr;  // __cuda_array_interface__
};
// The entry of an OnnxrunDType; Error when the module does not exchange it.
const DTypeEntry& EntryOf(int onnxrun_dtype);
// The entry of a DLPack dtype, or of a typestr; nullptr when unknown.
const DTypeEntry* EntryOfDlpack(uint8_t code, uint8_t bits);
const DTypeEntry* EntryOfTypestr(const std::string& typestr);
const DTypeEntry* EntryOfNumpy(const std::string& name);

// OnnxrunValues shared by every output array that views them.
using SharedValues = std::shared_ptr<OnnxrunValues>;

}  // namespace onnxrun_py

#endif  // ONNXRUN_PYTHON_MODULE_UTIL_H_
