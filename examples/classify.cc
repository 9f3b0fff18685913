// An application embedding onnxrun: loads an image classifier, feeds it an image of its own
// (a synthetic gradient), and prints the top classes. Usage: classify MODEL.onnx
#include <algorithm>
#include <cstdio>
#include <numeric>

#include "runtime/session.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: classify MODEL.onnx\n");
    return 2;
  }
  runtime::SessionOptions options;  // device auto, default limits
  auto session = runtime::Session::Create(argv[1], options);
  if (!session.ok()) {
    std::fprintf(stderr, "classify: %s\n", std::string(session.status().message()).c_str());
    return 1;
  }
  // The model's first input is an NCHW image; fill one with a gradient.
  const runtime::TensorInfo& input = (*session)->inputs().at(0);
  std::vector<int64_t> shape;
  for (const ir::Dim& d : *input.type.shape) shape.push_back(d.known() ? d.value : 1);
  ir::Tensor image = *ir::Tensor::Create(ir::DType::kFloat32, shape);
  for (int64_t i = 0; i < image.num_elements(); ++i) {
    image.data<float>()[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
  }
  auto outputs = (*session)->Run({{input.name, image}});
  if (!outputs.ok()) {
    std::fprintf(stderr, "classify: %s\n", std::string(outputs.status().message()).c_str());
    return 1;
  }
  const ir::Tensor& probs = outputs->at(0).tensor;
  std::vector<int> order(probs.num_elements());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return probs.data<float>()[a] > probs.data<float>()[b]; });
  double total = 0;
  for (int64_t i = 0; i < probs.num_elements(); ++i) total += probs.data<float>()[i];
  std::printf("device: %s\n", runtime::DeviceName((*session)->device()));
  for (int k = 0; k < std::min<int>(3, order.size()); ++k) {
    std::printf("class %d: %.4f\n", order[k], probs.data<float>()[order[k]]);
  }
  std::printf("sum of probabilities: %.6f\n", total);
  return 0;
}
