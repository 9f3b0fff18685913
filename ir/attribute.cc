// Typed attribute access and printing.
#include "ir/attribute.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace ir {
namespace {

template <typename T>
const T* Find(const std::map<std::string, AttributeValue>& values, const std::string& name) {
  auto it = values.find(name);
  if (it == values.end()) return nullptr;
  return std::get_if<T>(&it->second);
}

}  // namespace

int64_t Attributes::GetInt(const std::string& name, int64_t default_value) const {
  const int64_t* v = Find<int64_t>(values_, name);
  return v ? *v : default_value;
}

float Attributes::GetFloat(const std::string& name, float default_value) const {
  if (const float* v = Find<float>(values_, name)) return *v;
  if (const int64_t* v = Find<int64_t>(values_, name)) return static_cast<float>(*v);
  return default_value;
}

std::string Attributes::GetString(const std::string& name, const std::string& default_value) const {
  const std::string* v = Find<std::string>(values_, name);
  return v ? *v : default_value;
}

std::vector<int64_t> Attributes::GetInts(const std::string& name, const std::vector<int64_t>& default_value) const {
  const std::vector<int64_t>* v = Find<std::vector<int64_t>>(values_, name);
  return v ? *v : default_value;
}

std::vector<std::string> Attributes::GetStrings(const std::string& name,
                                                const std::vector<std::string>& default_value) const {
  const std::vector<std::string>* v = Find<std::vector<std::string>>(values_, name);
  return v ? *v : default_value;
}

std::vector<float> Attributes::GetFloats(const std::string& name, const std::vector<float>& default_value) const {
  const std::vector<float>* v = Find<std::vector<float>>(values_, name);
  return v ? *v : default_value;
}

const Tensor* Attributes::GetTensor(const std::string& name) const { return Find<Tensor>(values_, name); }

const Graph* Attributes::GetGraph(const std::string& name) const {
  const GraphPtr* g = Find<GraphPtr>(values_, name);
  return g ? g->get() : nullptr;
}

std::string AttributeValueToString(const AttributeValue& value) {
  struct Printer {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(float v) const { return absl::StrCat(v); }
    std::string operator()(const std::string& v) const { return absl::StrCat("\"", v, "\""); }
    std::string operator()(const std::vector<int64_t>& v) const {
      return absl::StrCat("[", absl::StrJoin(v, ","), "]");
    }
    std::string operator()(const std::vector<float>& v) const { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }
    std::string operator()(const std::vector<std::string>& v) const {
      return absl::StrCat("[\"", absl::StrJoin(v, "\",\""), "\"]");
    }
    std::string operator()(const Tensor& t) const {
      return absl::StrCat("tensor<", DTypeName(t.dtype()), ShapeToString(t.shape()), ">");
    }
    std::string operator()(const GraphPtr& g) const { return g ? "graph" : "graph<null>"; }
  };
  return std::visit(Printer{}, value);
}

}  // namespace ir
