// Activations on the host (models/activation_offload.hpp): Transformer Engine's windows and the
// layer-by-layer replay of its double-buffer handler, on cases worked by hand.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "models/activation_offload.hpp"

using namespace stepsim;

TEST_CASE("Offload windows: L / n layers a group, the first L mod n one longer", "[offload_activations]") {
  // TE's layer_window_map: ((L // n) (i + 1)) - 1, plus i + 1 for the first L mod n groups, plus
  // L mod n for the rest; the last window ends at the model's last layer.
  CHECK(offload_windows(2, 4) == std::vector<int>{1, 3});
  CHECK(offload_windows(2, 3) == std::vector<int>{1, 2});
  CHECK(offload_windows(1, 5) == std::vector<int>{4});
  CHECK(offload_windows(3, 9) == std::vector<int>{2, 5, 8});
  CHECK(offload_windows(31, 32).front() == 1);
  // 22 of 32: ten windows of two layers, then twelve of one.
  const std::vector<int> w = offload_windows(22, 32);
  REQUIRE(w.size() == 22);
  for (int i = 0; i < 10; ++i) CHECK(w[static_cast<std::size_t>(i)] == 2 * i + 1);
  for (int i = 10; i < 22; ++i) CHECK(w[static_cast<std::size_t>(i)] == i + 10);
  CHECK_THROWS_AS(offload_windows(0, 4), std::invalid_argument);
  CHECK_THROWS_AS(offload_windows(5, 4), std::invalid_argument);
}

TEST_CASE("Offload replay: the compute waits what the copies do not hide", "[offload_activations]") {
  // Four layers of 1 s forward, 2 s backward, 10 B each; the first two offloaded (windows 1, 3).
  const std::vector<OffloadLayer> layers(4, OffloadLayer{1.0, 2.0, 10});
  SECTION("copies of 2 s: one second waited in the forward, none in the backward") {
    // Forward: group 0's copy runs 1-3 s, layer 1 ends at 2 s: the stream waits to 3 s; group 1's
    // copy 3-5 s ends as layer 3 does. Backward: group 1 back at 0-2 s while layer 3 runs, group 0
    // at 4-6 s while layer 1 does, layer 0 starts at 6 s.
    const ActivationOffload a = activation_offload(layers, 2, 5.0);
    CHECK(a.layers == 2);
    CHECK(a.host == 20);
    CHECK(a.all_layers == 40);
    CHECK(a.gpu_peak == 30);  // layer 3 done, group 1 not yet freed: layers 1, 2, 3
    CHECK(a.copy == Approx(4.0));
    CHECK(a.forward_wait() == Approx(1.0));
    CHECK(a.backward_wait() == Approx(0.0));
  }
  SECTION("copies of 4 s: 5 s waited in the forward, 2 s in the backward") {
    // Forward: copy 0 at 1-5 s, the stream waits at 2 s for 3 s; copy 1 at 5-9 s, layer 3 ends at
    // 7 s: 2 s more. Backward: group 1 back at 0-4 s, waited for before layer 1 at 4 s (none);
    // group 0 at 4-8 s, layer 0 waits from 6 s to 8 s.
    const ActivationOffload a = activation_offload(layers, 2, 2.5);
    CHECK(a.forward_wait() == Approx(5.0));
    CHECK(a.backward_wait() == Approx(2.0));
    CHECK(a.gpu_peak == 30);
    // By layer: after layer 1's forward 3 s, after layer 3's 2 s; before layer 0's backward 2 s.
    CHECK(a.forward_waits == std::vector<double>{0, 3, 0, 2});
    CHECK(a.backward_waits == std::vector<double>{2, 0, 0, 0});
  }
  SECTION("nothing offloaded: every layer's activations on the GPU, no waits") {
    const ActivationOffload a = activation_offload(layers, 0, 5.0);
    CHECK(a.layers == 0);
    CHECK(a.host == 0);
    CHECK(a.gpu_peak == 40);
    CHECK(a.forward_wait() == 0);
    CHECK(a.backward_wait() == 0);
  }
  SECTION("the last layer stays; a link is needed") {
    CHECK_THROWS_AS(activation_offload(layers, 4, 5.0), std::invalid_argument);
    CHECK_THROWS_AS(activation_offload(layers, 1, 0.0), std::invalid_argument);
  }
}

TEST_CASE("Offload replay: the GPU's share falls with the layers offloaded", "[offload_activations]") {
  // 32 equal layers: with n offloaded, the forward's end holds the 32 - n kept and the last group
  // still in its window, 33 - n layers.
  const std::vector<OffloadLayer> layers(32, OffloadLayer{0.01, 0.02, 1000});
  for (int n : {1, 8, 16, 24, 31}) {
    const ActivationOffload a = activation_offload(layers, n, 1e9);
    CHECK(a.gpu_peak == 1000 * (33 - n));
    CHECK(a.host == 1000 * n);
    // Copies of 1 us against windows of 10 ms and more: nothing waited.
    CHECK(a.forward_wait() == 0);
    CHECK(a.backward_wait() == 0);
  }
}
