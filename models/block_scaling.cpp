#include "models/block_scaling.hpp"

namespace stepsim {

namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
}  // namespace

std::int64_t scale_factor_count(std::int64_t m, std::int64_t k, ScaleBlock block) {
  if (m <= 0 || k <= 0 || block.rows <= 0 || block.cols <= 0) return 0;
  return ceil_div(m, block.rows) * ceil_div(k, block.cols);
}

Bytes block_scaled_bytes(std::int64_t m, std::int64_t k, ScaleBlock block, int element_bytes, int scale_bytes) {
  if (m <= 0 || k <= 0) return 0;
  return m * k * element_bytes + scale_factor_count(m, k, block) * scale_bytes;
}

double block_scaled_bytes_per_element(ScaleBlock block, int element_bytes, int scale_bytes) {
  return element_bytes + static_cast<double>(scale_bytes) / static_cast<double>(block.rows * block.cols);
}

}  // namespace stepsim
