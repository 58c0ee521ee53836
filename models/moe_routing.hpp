#pragma once
// Rows per expert of one mixture-of-experts layer, and per card once the experts are placed
// (section 10.3.3, figure 10-27).
//
// Every token picks top_k of E experts, so a layer dispatches tokens x top_k rows; on average an
// expert gets tokens x top_k / E of them (Qwen3-235B-A22B, E = 128, k = 8, 8,192 tokens: 65,536
// dispatches, 512 rows per expert). Routing is rarely even: the experts that get more rows sit on
// some card, and that card finishes last.
//
// Capacity factor c (Lepikhin et al. 2020 "GShard", sec. 2.2; Fedus et al. 2021 "Switch
// Transformer", sec. 2.2): every expert has room for ceil(c x mean) rows; rows over that are
// dropped (the token skips the expert) and fixed-shape kernels pad the rest with zeros, so each
// expert computes exactly its capacity. Without a capacity factor the layer is "dropless" and an
// expert computes the rows it received.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace stepsim {

// How the dispatches spread over the experts.
struct MoeRoutingSpec {
  enum class Kind : std::uint8_t {
    Balanced,  // every expert gets the mean (remainders to the lowest ids)
    Hot,       // the first round(E x hot_fraction) experts get hot_load x the mean, the rest share what is left
    Explicit,  // rows per expert as given
  };
  Kind kind = Kind::Balanced;
  double hot_fraction = 0;          // Hot: share of the experts that are hot, in (0, 1]
  double hot_load = 1;              // Hot: a hot expert's rows as a multiple of the mean, >= 1
  std::vector<std::int64_t> loads;  // Explicit: one entry per expert
  bool operator==(const MoeRoutingSpec&) const = default;
};

// Where expert e lives on `cards` cards holding E / cards experts each.
enum class ExpertPlacement : std::uint8_t {
  Contiguous,  // card e / (E / cards): experts 0..E/cards-1 on card 0, ... (Megatron, DeepSpeed)
  RoundRobin,  // card e mod cards
};
std::string_view placement_name(ExpertPlacement p);  // "contiguous", "round_robin"
std::optional<ExpertPlacement> parse_placement(std::string_view text);
int expert_card(int expert, int experts, int cards, ExpertPlacement placement);

struct MoeLayerShape {
  int experts = 0;
  int top_k = 0;
  std::int64_t tokens = 0;
  std::optional<double> capacity_factor;  // none: dropless
};

// tokens x top_k.
std::int64_t moe_dispatches(std::int64_t tokens, int top_k);

struct ExpertLoads {
  std::int64_t dispatches = 0;           // rows routed in all
  double mean = 0;                       // dispatches / E
  std::optional<std::int64_t> capacity;  // ceil(c x mean) rows per expert
  std::vector<std::int64_t> routed;      // per expert: rows the router sent
  std::vector<std::int64_t> kept;        // per expert: min(routed, capacity)
  std::vector<std::int64_t> computed;    // per expert: capacity (padded) or routed (dropless)
  std::int64_t dropped = 0;              // sum of routed - kept
  std::int64_t padded = 0;               // sum of computed - kept
};

// An input that cannot be; `key` names it ("top_k", "routing.loads").
class MoeInputError : public std::invalid_argument {
 public:
  MoeInputError(std::string key, const std::string& what) : std::invalid_argument(what), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Throws MoeInputError for a shape or routing that cannot be: no experts, top_k above E, hot fraction outside (0, 1],
// hot rows above the total, explicit loads whose count is not E or whose sum is not tokens x top_k, an expert given
// more rows than there are tokens (a token picks an expert at most once).
ExpertLoads route_experts(const MoeLayerShape& shape, const MoeRoutingSpec& routing);

// Rows each card computes (sum of its experts' `computed`). Throws MoeInputError("cards") unless
// the cards hold the experts evenly.
std::vector<std::int64_t> card_rows(const ExpertLoads& loads, int cards, ExpertPlacement placement);

// Forward FLOPs of one row through a SwiGLU expert (gate, up and down projections of hidden x
// intermediate, 2 FLOPs per multiply-add; Kaplan et al. 2020 sec. 2.1): 6 x hidden x intermediate.
// Qwen3-235B-A22B (hidden 4,096, expert width 1,536): 37,748,736.
double expert_row_flops(std::int64_t hidden, std::int64_t intermediate);
// The time of one such row at `flops_per_second` achieved, rounded up to the nanosecond once.
Time expert_row_time(double row_flops, double flops_per_second);

}  // namespace stepsim
