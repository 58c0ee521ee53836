#pragma once
// Activations on the host: Megatron-Core's CPU offloading (--cpu-offloading with
// --cpu-offloading-num-layers N, activations only), which runs through Transformer Engine's
// AsyncDoubleBufferGroupOffloadHandler. The saved tensors of the model's first N layers (each
// layer a group) go down the GPU's host link on a copy stream during the forward and come back
// during the backward. The handler spreads the N copies over the model's L layers: group i's
// copy must be done when the forward commits layer w_i (its window, layer_window_map), where the
// compute stream and the copy stream wait for each other, group i's memory is freed and group
// i + 1's copy starts (group 0's starts after layer 0). In the backward, before layer w_i runs,
// the streams wait for each other and group i is reloaded; before layer 0, every reload is waited
// for. Megatron-Core refuses it with a pipeline and with recompute (TransformerConfig).
//
// This file replays that rule layer by layer for one micro-batch, from each layer's forward and
// backward time and the bytes it keeps: what the compute stream waits, and the most of the
// layers' activations on the GPU at once.
#include <numeric>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

struct OffloadLayer {
  double forward = 0, backward = 0;  // the layer's passes on the compute stream, seconds
  Bytes activation = 0;              // what it keeps for its backward
};

struct ActivationOffload {
  int layers = 0;            // offloaded: the model's first `layers`
  Bytes host = 0;            // their activations, a micro-batch, in host memory
  Bytes all_layers = 0;      // every layer's activations, as kept without offload
  Bytes gpu_peak = 0;        // of the layers' activations, the most on the GPU at once
  double copy = 0;           // the copies' link time each way, a micro-batch, seconds
  // By layer, what the compute stream waits for them after a layer's forward (at its window's end)
  // and before its backward (ZeRO-3's lowering runs layer by layer); empty without offload.
  std::vector<double> forward_waits, backward_waits;
  // Their sums: a micro-batch's forward and backward.
  double forward_wait() const { return std::accumulate(forward_waits.begin(), forward_waits.end(), 0.0); }
  double backward_wait() const { return std::accumulate(backward_waits.begin(), backward_waits.end(), 0.0); }
};

// The last layer of each offloaded group's window, w_0 < ... < w_{n-1} = L - 1: L / n layers a
// group, the first L mod n one more (TE's layer_window_map). Needs 0 < n <= L.
std::vector<int> offload_windows(int offloaded, int layers);

// One micro-batch of `layers` with the first `offloaded` on the host, over a link of
// `link_bytes_per_second` each way (copies out and in never overlap: a micro-batch's forward
// ends before its backward starts). `offloaded` 0: nothing moves.
ActivationOffload activation_offload(const std::vector<OffloadLayer>& layers, int offloaded,
                                     double link_bytes_per_second);

}  // namespace stepsim
