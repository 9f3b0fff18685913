// kernels/cudnn/plan_serialization.cc: execution plans to and from cuDNN's serialized text, and the
// plan-blob envelope around it.
#include "kernels/cudnn/plan_serialization.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kernels/cudnn/engine.h"
#include "kernels/cudnn/status.h"

namespace cudnn {
namespace {

constexpr char kBlobMagic[] = "onnxrun-cudnn-plan";

// The value of "name=value" in `token`; InvalidArgument when the token is another field.
absl::StatusOr<int64_t> Field(const std::string& field, const char* name) {
  absl::string_view token = field;
  int64_t value = 0;
  if (!absl::ConsumePrefix(&token, name) || !absl::ConsumePrefix(&token, "=") || !absl::SimpleAtoi(token, &value)) {
    return absl::InvalidArgumentError(absl::StrCat("plan blob header: expected ", name, "=<integer>"));
  }
  return value;
}

absl::StatusOr<BackendDescriptor> DevicePropertiesFor(cudnnHandle_t handle, const BuildOptions& options) {
  if (options.device_properties_json_path.has_value()) {
    return LoadDeviceProperties(*options.device_properties_json_path);
  }
  if (handle != nullptr) return DevicePropertiesFromHandle(handle);
  return absl::InvalidArgumentError(
      "loading a serialized plan needs a handle or BuildOptions::device_properties_json_path");
}

}  // namespace

absl::StatusOr<std::string> SerializeExecutionPlan(const BackendDescriptor& plan) {
  if (plan.get() == nullptr || !plan.finalized()) {
    return absl::FailedPreconditionError("serializing a plan needs a finalized plan descriptor");
  }
  CUDNN_ASSIGN_OR_RETURN(int64_t size, plan.Count(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR));
  std::string text(static_cast<size_t>(size), '\0');
  int64_t written = 0;
  CUDNN_RETURN_IF_NOT_OK(
      plan.GetRaw(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR, size, &written, text.data()));
  text.resize(static_cast<size_t>(std::min(written, size)));
  while (!text.empty() && text.back() == '\0') text.pop_back();  // cuDNN may count a terminator
  if (text.empty()) return absl::InternalError("cuDNN returned an empty plan serialization");
  return text;
}

absl::StatusOr<BackendDescriptor> DeserializeExecutionPlan(std::string_view text,
                                                           const BackendDescriptor& device_props) {
  if (text.empty()) return absl::InvalidArgumentError("empty plan serialization");
  if (device_props.get() == nullptr) {
    // cuDNN 9.19 crashes inside cudnnBackendFinalize then (seen on a machine without a GPU).
    return absl::InvalidArgumentError("loading a serialized plan needs device properties");
  }
  CUDNN_ASSIGN_OR_RETURN(BackendDescriptor plan, BackendDescriptor::Create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR));
  CUDNN_RETURN_IF_NOT_OK(plan.SetRaw(CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, CUDNN_TYPE_CHAR,
                                     static_cast<int64_t>(text.size()), text.data()));
  CUDNN_RETURN_IF_NOT_OK(plan.SetDescriptor(CUDNN_ATTR_EXECUTION_PLAN_DEVICEPROP, device_props));
  CUDNN_RETURN_IF_NOT_OK(plan.Finalize());
  return plan;
}

absl::StatusOr<BackendDescriptor> PlanEngineConfig(const BackendDescriptor& plan) {
  CUDNN_ASSIGN_OR_RETURN(std::vector<BackendDescriptor> config,
                         BackendDescriptor::CreateMany(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, 1));
  CUDNN_ASSIGN_OR_RETURN(int64_t filled, plan.GetDescriptors(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config));
  if (filled != 1) return absl::InternalError("plan reports no engine config");
  return std::move(config[0]);
}

std::string EncodePlanBlob(const PlanBlob& blob) {
  return absl::StrCat(kBlobMagic, " ", kPlanBlobFormatVersion, " cudnn=", blob.cudnn_version, " rung=", blob.rung,
                      " engine=", blob.engine_id, "\n", blob.cudnn_text);
}

absl::StatusOr<PlanBlob> DecodePlanBlob(std::string_view bytes) {
  const size_t newline = bytes.find('\n');
  if (newline == std::string_view::npos) {
    return absl::InvalidArgumentError("plan blob: no header line");
  }
  const std::vector<std::string> header = absl::StrSplit(std::string(bytes.substr(0, newline)), ' ');
  if (header.size() != 5 || header[0] != kBlobMagic) {
    return absl::InvalidArgumentError("plan blob: not an onnxrun cuDNN plan");
  }
  int version = 0;
  if (!absl::SimpleAtoi(header[1], &version) || version != kPlanBlobFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan blob: format version ", header[1], ", expected ", kPlanBlobFormatVersion));
  }
  PlanBlob blob;
  CUDNN_ASSIGN_OR_RETURN(blob.cudnn_version, Field(header[2], "cudnn"));
  CUDNN_ASSIGN_OR_RETURN(int64_t rung, Field(header[3], "rung"));
  CUDNN_ASSIGN_OR_RETURN(blob.engine_id, Field(header[4], "engine"));
  if (rung < 0 || rung > 2) return absl::InvalidArgumentError("plan blob: rung out of range");
  blob.rung = static_cast<int>(rung);
  blob.cudnn_text = std::string(bytes.substr(newline + 1));
  if (blob.cudnn_text.empty()) return absl::InvalidArgumentError("plan blob: no plan text");
  return blob;
}

absl::Status CheckPlanBlobVersion(const PlanBlob& blob) {
  const int64_t here = static_cast<int64_t>(cudnnGetVersion());
  if (blob.cudnn_version != here) {
    return absl::FailedPreconditionError(
        absl::StrCat("plan blob serialized by cuDNN ", blob.cudnn_version, ", this process has ", here));
  }
  return absl::OkStatus();
}

absl::StatusOr<LoadedPlan> LoadPlanBlob(cudnnHandle_t handle, std::string_view bytes, const BuildOptions& options) {
  CUDNN_ASSIGN_OR_RETURN(PlanBlob blob, DecodePlanBlob(bytes));
  CUDNN_RETURN_IF_NOT_OK(CheckPlanBlobVersion(blob));
  LoadedPlan out;
  CUDNN_ASSIGN_OR_RETURN(out.device_props, DevicePropertiesFor(handle, options));
  CUDNN_ASSIGN_OR_RETURN(out.plan, DeserializeExecutionPlan(blob.cudnn_text, out.device_props));
  CUDNN_ASSIGN_OR_RETURN(out.config, PlanEngineConfig(out.plan));
  CUDNN_ASSIGN_OR_RETURN(out.candidate, DescribeConfig(out.config, blob.rung));
  if (out.candidate.engine_id != blob.engine_id) {
    return absl::DataLossError(
        absl::StrCat("plan blob claims engine ", blob.engine_id, ", its plan runs engine ", out.candidate.engine_id));
  }
  CUDNN_ASSIGN_OR_RETURN(out.workspace, out.plan.Get<int64_t>(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE));
  return out;
}

}  // namespace cudnn
