#include "models/activation_offload.hpp"

#include <algorithm>
#include <stdexcept>

namespace stepsim {

std::vector<int> offload_windows(int offloaded, int layers) {
  if (offloaded <= 0 || offloaded > layers) throw std::invalid_argument("offload_windows: 0 < offloaded <= layers");
  // TE's AsyncDoubleBufferGroupOffloadHandler.__init__: L / n layers a window, the first L mod n
  // windows one layer longer, so that the last ends at the model's last layer.
  std::vector<int> w(static_cast<std::size_t>(offloaded));
  const int each = layers / offloaded, longer = layers % offloaded;
  for (int i = 0; i < offloaded; ++i) w[static_cast<std::size_t>(i)] = each * (i + 1) - 1 + std::min(i + 1, longer);
  return w;
}

ActivationOffload activation_offload(const std::vector<OffloadLayer>& layers, int offloaded,
                                     double link_bytes_per_second) {
  ActivationOffload r;
  const int n = static_cast<int>(layers.size());
  for (const OffloadLayer& x : layers) r.all_layers += x.activation;
  r.gpu_peak = r.all_layers;
  if (offloaded <= 0) return r;
  if (offloaded >= n) throw std::invalid_argument("activation_offload: the last layer is never offloaded");
  if (!(link_bytes_per_second > 0)) throw std::invalid_argument("activation_offload: no host link");
  const std::vector<int> w = offload_windows(offloaded, n);
  const auto copy = [&](int g) {
    return static_cast<double>(layers[static_cast<std::size_t>(g)].activation) / link_bytes_per_second;
  };
  r.layers = offloaded;
  r.forward_waits.assign(static_cast<std::size_t>(n), 0.0);
  r.backward_waits.assign(static_cast<std::size_t>(n), 0.0);
  for (int g = 0; g < offloaded; ++g) {
    r.host += layers[static_cast<std::size_t>(g)].activation;
    r.copy += copy(g);
  }
  // The forward: t the compute stream's clock, copied when the copy stream is free.
  Bytes on_gpu = 0, peak = 0;
  double t = 0, copied = 0;
  int k = 0;  // groups whose window has closed (offloaded_group_count)
  for (int j = 0; j < n; ++j) {
    t += layers[static_cast<std::size_t>(j)].forward;
    on_gpu += layers[static_cast<std::size_t>(j)].activation;
    peak = std::max(peak, on_gpu);
    if (j == 0) copied = t + copy(0);  // group 0's copy starts once layer 0 is done
    if (k < offloaded && w[static_cast<std::size_t>(k)] == j) {
      if (copied > t) r.forward_waits[static_cast<std::size_t>(j)] += copied - t;
      t = std::max(t, copied);
      on_gpu -= layers[static_cast<std::size_t>(k)].activation;  // freed: it is on the host
      if (k + 1 < offloaded) copied = t + copy(k + 1);
      ++k;
    }
  }
  // The backward, from the last layer: group k - 1 reloaded before layer w_{k-1} runs, the reload
  // before it waited for then; every reload waited for before layer 0.
  t = 0;
  double reloaded = 0;
  for (int j = n - 1; j >= 0; --j) {
    if (k >= 1 && w[static_cast<std::size_t>(k - 1)] == j) {
      if (reloaded > t) r.backward_waits[static_cast<std::size_t>(j)] += reloaded - t;
      t = std::max(t, reloaded);
      reloaded = t + copy(k - 1);
      on_gpu += layers[static_cast<std::size_t>(k - 1)].activation;
      peak = std::max(peak, on_gpu);
      if (k > 1) --k;
    }
    if (j == 0) {
      if (reloaded > t) r.backward_waits[0] += reloaded - t;
      t = std::max(t, reloaded);
    }
    t += layers[static_cast<std::size_t>(j)].backward;
    on_gpu -= layers[static_cast<std::size_t>(j)].activation;  // its backward done
  }
  r.gpu_peak = peak;
  return r;
}

}  // namespace stepsim
