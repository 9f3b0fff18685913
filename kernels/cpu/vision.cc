// The vision-family CPU kernel table (NonMaxSuppression, RoiAlign, MaxRoiPool, GridSample,
// AffineGrid, and the Lp pools whose kernels live with the other pools in nn_pool.cc), and NonMaxSuppression:
// per batch and class, greedy selection by descending score (ties: lower box index first) of boxes
// whose IoU with every box already selected is at most iou_threshold.
#include "kernels/cpu/vision.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "kernels/cpu/dispatch.h"
#include "kernels/cpu/nn_util.h"

namespace kernels::cpu {
namespace vision {
namespace {

// A box as [x_min, y_min, x_max, y_max] (corners in either order become min/max).
struct Box {
  double x0, y0, x1, y1;
  double area() const { return (x1 - x0) * (y1 - y0); }
};

Box ReadBox(const double* v, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    return {v[0] - v[2] / 2, v[1] - v[3] / 2, v[0] + v[2] / 2, v[1] + v[3] / 2};
  }
  // [y1, x1, y2, x2]
  return {std::min(v[1], v[3]), std::min(v[0], v[2]), std::max(v[1], v[3]), std::max(v[0], v[2])};
}

// True when IoU(a, b) > threshold; boxes without area never suppress.
bool Suppresses(const Box& a, const Box& b, double threshold) {
  const double ix0 = std::max(a.x0, b.x0), iy0 = std::max(a.y0, b.y0);
  const double ix1 = std::min(a.x1, b.x1), iy1 = std::min(a.y1, b.y1);
  if (!(ix1 > ix0) || !(iy1 > iy0)) return false;
  const double area_a = a.area(), area_b = b.area();
  if (!(area_a > 0) || !(area_b > 0)) return false;
  const double inter = (ix1 - ix0) * (iy1 - iy0);
  const double uni = area_a + area_b - inter;
  return uni > 0 && inter / uni > threshold;
}

// A scalar input as double (`absent` when not given); an error when it has several elements.
absl::StatusOr<double> ScalarInput(const KernelContext& ctx, size_t i, double absent, const char* name) {
  const ir::Tensor* t = ctx.input(i);
  if (t == nullptr || t->num_elements() == 0) return absent;
  if (t->num_elements() != 1) return absl::InvalidArgumentError(absl::StrCat(name, " must be a scalar"));
  return t->GetAsDouble(0);
}

std::vector<double> AsDoubles(const ir::Tensor& t) {
  std::vector<double> out(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = t.GetAsDouble(i);
  return out;
}

}  // namespace

absl::Status NonMaxSuppression(KernelContext& ctx) {
  const ir::Tensor *boxes_t = ctx.input(0), *scores_t = ctx.input(1);
  if (boxes_t == nullptr || scores_t == nullptr || ctx.output(0) == nullptr) {
    return absl::InvalidArgumentError("boxes, scores and selected_indices are required");
  }
  if (boxes_t->rank() != 3 || boxes_t->shape()[2] != 4 || scores_t->rank() != 3 ||
      scores_t->shape()[0] != boxes_t->shape()[0] || scores_t->shape()[2] != boxes_t->shape()[1]) {
    return absl::InvalidArgumentError(absl::StrCat("boxes ", ir::ShapeToString(boxes_t->shape()), " and scores ",
                                                   ir::ShapeToString(scores_t->shape()),
                                                   " are not [batch, boxes, 4] and [batch, classes, boxes]"));
  }
  absl::StatusOr<double> max_out = ScalarInput(ctx, 2, 0, "max_output_boxes_per_class");
  absl::StatusOr<double> iou = ScalarInput(ctx, 3, 0, "iou_threshold");
  absl::StatusOr<double> score_threshold = ScalarInput(ctx, 4, 0, "score_threshold");
  for (const auto* s : {&max_out, &iou, &score_threshold}) {
    if (!s->ok()) return s->status();
  }
  if (!(*iou >= 0 && *iou <= 1))
    return absl::InvalidArgumentError(absl::StrCat("iou_threshold ", *iou, " not in [0, 1]"));
  const bool has_score_threshold = ctx.input(4) != nullptr && ctx.input(4)->num_elements() > 0;
  const bool center_point = ctx.attrs().GetInt("center_point_box", 0) != 0;
  const int64_t batches = boxes_t->shape()[0], n = boxes_t->shape()[1], classes = scores_t->shape()[1];
  const int64_t limit = static_cast<int64_t>(std::clamp(*max_out, 0.0, static_cast<double>(n)));
  const std::vector<double> box_values = AsDoubles(*boxes_t), scores = AsDoubles(*scores_t);

  std::vector<int64_t> selected;  // triples
  std::vector<int64_t> order;
  std::vector<Box> kept;
  for (int64_t b = 0; b < batches; ++b) {
    std::vector<Box> boxes(n);
    for (int64_t i = 0; i < n; ++i) boxes[i] = ReadBox(&box_values[(b * n + i) * 4], center_point);
    for (int64_t c = 0; c < classes; ++c) {
      const double* s = &scores[(b * classes + c) * n];
      order.clear();
      for (int64_t i = 0; i < n && limit > 0; ++i) {
        if (std::isnan(s[i])) continue;  // unrankable
        if (!has_score_threshold || s[i] > *score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= limit) break;
        if (std::any_of(kept.begin(), kept.end(), [&](const Box& k) { return Suppresses(k, boxes[i], *iou); })) {
          continue;
        }
        kept.push_back(boxes[i]);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  absl::StatusOr<ir::Tensor> out =
      ir::Tensor::Create(ir::DType::kInt64, {static_cast<int64_t>(selected.size() / 3), 3});
  if (!out.ok()) return out.status();
  std::copy(selected.begin(), selected.end(), out->data<int64_t>());
  *ctx.output(0) = *std::move(out);
  return absl::OkStatus();
}

}  // namespace vision

std::vector<KernelDef> VisionKernels() {
  return {
      {"NonMaxSuppression", vision::NonMaxSuppression},
      {"RoiAlign", vision::RoiAlign},
      {"MaxRoiPool", vision::MaxRoiPool},
      {"GridSample", vision::GridSample},
      {"AffineGrid", vision::AffineGrid},
      {"LpPool", nn::LpPool},
      {"GlobalLpPool", nn::GlobalLpPool},
  };
}

}  // namespace kernels::cpu
