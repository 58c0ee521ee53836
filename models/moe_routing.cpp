#include "models/moe_routing.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "sim/checked.hpp"

namespace stepsim {

namespace {

// `total` split over `n` slots as evenly as whole rows allow; the first total mod n get one more.
void spread(std::vector<std::int64_t>& out, std::size_t from, std::int64_t n, std::int64_t total) {
  for (std::int64_t i = 0; i < n; ++i) out[from + i] = total / n + (i < total % n ? 1 : 0);
}

constexpr std::int64_t kPpm = 1'000'000;

}  // namespace

std::string_view placement_name(ExpertPlacement p) {
  return p == ExpertPlacement::Contiguous ? "contiguous" : "round_robin";
}

std::optional<ExpertPlacement> parse_placement(std::string_view text) {
  if (text == "contiguous") return ExpertPlacement::Contiguous;
  if (text == "round_robin") return ExpertPlacement::RoundRobin;
  return std::nullopt;
}

int expert_card(int expert, int experts, int cards, ExpertPlacement placement) {
  return placement == ExpertPlacement::Contiguous ? expert / (experts / cards) : expert % cards;
}

std::int64_t moe_dispatches(std::int64_t tokens, int top_k) { return tokens * top_k; }

ExpertLoads route_experts(const MoeLayerShape& shape, const MoeRoutingSpec& routing) {
  const int E = shape.experts;
  if (E < 1) throw MoeInputError("experts", "must be at least 1");
  if (shape.top_k < 1 || shape.top_k > E)
    throw MoeInputError("top_k", fmt::format("{} is not between 1 and the {} experts", shape.top_k, E));
  if (shape.tokens < 1) throw MoeInputError("tokens", "must be at least 1");
  ExpertLoads out;
  out.dispatches = moe_dispatches(shape.tokens, shape.top_k);
  out.mean = static_cast<double>(out.dispatches) / E;
  out.routed.assign(E, 0);
  const std::int64_t D = out.dispatches;

  switch (routing.kind) {
    case MoeRoutingSpec::Kind::Balanced: spread(out.routed, 0, E, D); break;
    case MoeRoutingSpec::Kind::Hot: {
      if (!(routing.hot_fraction > 0 && routing.hot_fraction <= 1))
        throw MoeInputError("routing.hot_experts", "must be a fraction in (0, 1], e.g. 50%");
      if (!(routing.hot_load >= 1)) throw MoeInputError("routing.hot_load", "must be at least 1 (x the mean)");
      if (routing.hot_load > E)
        throw MoeInputError("routing.hot_load",
                            fmt::format("{} x the mean is more than all {} experts' rows", routing.hot_load, E));
      const std::int64_t hot = std::max<std::int64_t>(1, std::llround(E * routing.hot_fraction));
      // Rows of all hot experts together: hot x mean x hot_load, to the nearest row.
      const std::int64_t hot_rows =
          std::llround(static_cast<double>(hot) * static_cast<double>(D) * routing.hot_load / E);
      if (hot_rows > D || (hot == E && hot_rows != D))
        throw MoeInputError("routing.hot_load",
                            fmt::format("{} hot experts at {} x the mean need {} rows, but the layer dispatches {}",
                                        hot, routing.hot_load, hot_rows, D));
      spread(out.routed, 0, hot, hot_rows);
      if (hot < E) spread(out.routed, hot, E - hot, D - hot_rows);
      break;
    }
    case MoeRoutingSpec::Kind::Explicit: {
      if (static_cast<int>(routing.loads.size()) != E)
        throw MoeInputError("routing.loads", fmt::format("{} entries for {} experts", routing.loads.size(), E));
      std::int64_t sum = 0;
      for (std::size_t e = 0; e < routing.loads.size(); ++e) {
        if (routing.loads[e] < 0) throw MoeInputError("routing.loads", fmt::format("expert {} has negative rows", e));
        if (__builtin_add_overflow(sum, routing.loads[e], &sum))
          throw MoeInputError("routing.loads",
                              fmt::format("the rows add up to more than the {} that {} tokens x top-{} dispatch", D,
                                          shape.tokens, shape.top_k));
      }
      if (sum != D)
        throw MoeInputError("routing.loads", fmt::format("the rows add up to {}, but {} tokens x top-{} dispatch {}",
                                                         sum, shape.tokens, shape.top_k, D));
      out.routed = routing.loads;
      break;
    }
  }
  for (int e = 0; e < E; ++e)
    if (out.routed[e] > shape.tokens)
      throw MoeInputError(
          "routing",
          fmt::format("expert {} would get {} rows, more than the {} tokens (a token picks an expert at most once)", e,
                      out.routed[e], shape.tokens));

  out.kept = out.routed;
  out.computed = out.routed;
  if (shape.capacity_factor) {
    if (!(*shape.capacity_factor > 0) || *shape.capacity_factor > E)
      throw MoeInputError("capacity_factor",
                          fmt::format("must be in (0, {}]: beyond E every expert has room for all rows", E));
    // ceil(c x D / E), with c taken to a millionth so that 1.25 x 512 is exactly 640.
    const __int128 c_ppm = std::llround(*shape.capacity_factor * kPpm);
    const __int128 den = static_cast<__int128>(E) * kPpm;
    const auto cap = static_cast<std::int64_t>((c_ppm * D + den - 1) / den);
    out.capacity = cap;
    for (int e = 0; e < E; ++e) {
      out.kept[e] = std::min(out.routed[e], cap);
      out.computed[e] = cap;
      out.dropped += out.routed[e] - out.kept[e];
      out.padded += cap - out.kept[e];
    }
  }
  return out;
}

std::vector<std::int64_t> card_rows(const ExpertLoads& loads, int cards, ExpertPlacement placement) {
  const int E = static_cast<int>(loads.computed.size());
  if (cards < 1 || E % cards != 0)
    throw MoeInputError("cards", fmt::format("{} cards cannot hold {} experts evenly", cards, E));
  std::vector<std::int64_t> rows(cards, 0);
  for (int e = 0; e < E; ++e) rows[expert_card(e, E, cards, placement)] += loads.computed[e];
  return rows;
}

double expert_row_flops(std::int64_t hidden, std::int64_t intermediate) {
  return 6.0 * static_cast<double>(hidden) * static_cast<double>(intermediate);
}

Time expert_row_time(double row_flops, double flops_per_second) {
  if (!(row_flops > 0) || !(flops_per_second > 0)) return 0;
  return time_from_ns(std::ceil(row_flops / flops_per_second * static_cast<double>(kSecond)),
                      "an expert row's compute time");
}

}  // namespace stepsim
