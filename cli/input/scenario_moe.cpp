// Reading the `moe` section (README "Mixture-of-experts layers") into schedules/moe_layer.hpp.
#include "cli/input/scenario_moe.hpp"

#include <fmt/format.h>

#include "cli/input/model_files.hpp"
#include "cli/input/moe_routing_input.hpp"
#include "models/model_limits.hpp"

namespace stepsim::cli {

namespace {

const std::vector<std::string> kMoeKeys = {"experts",    "top_k",           "tokens",   "cards",  "placement",
                                           "routing",    "capacity_factor", "row_time", "expert", "accelerator",
                                           "efficiency", "row_bytes",       "link"};

// A count that must fit an int (experts, top_k, cards): larger ones are refused here, not clamped.
std::optional<int> opt_int(const Reader& r, const std::string& k) {
  const auto v = r.opt_integer(k);
  if (!v) return std::nullopt;
  if (*v > 1'000'000'000) r.fail(k, fmt::format("{} is too large", *v));
  return static_cast<int>(*v);
}

// Applies the keys present in `r` over `s` (the base section, or a variant over the base).
void apply(const Reader& r, MoeLayerSpec& s) {
  if (auto v = opt_int(r, "experts")) s.shape.experts = *v;
  if (auto v = opt_int(r, "top_k")) s.shape.top_k = *v;
  if (auto v = r.opt_integer("tokens")) s.shape.tokens = *v;
  if (auto v = opt_int(r, "cards")) s.cards = *v;
  if (r.has("placement")) s.placement = read_placement(r, "placement");
  if (r.has("routing")) s.routing = read_routing(r);
  if (r.has("capacity_factor")) s.shape.capacity_factor = read_capacity_factor(r);
  if (r.has("row_time") && (r.has("expert") || r.has("accelerator")))
    r.fail("row_time", "give row_time, or expert with accelerator and efficiency, not both");
  if (auto v = r.opt_duration("row_time")) {
    if (*v <= 0) r.fail("row_time", "must be positive");
    s.row_time = *v;
  }
  if (r.has("expert") || r.has("accelerator") || r.has("efficiency")) {
    for (const char* k : {"expert", "accelerator"})
      if (!r.has(k))
        r.fail(k, "missing: the row time comes from expert {hidden, intermediate}, accelerator and efficiency");
    const Reader e = r.child("expert");
    e.only({"hidden", "intermediate"});
    const std::int64_t hidden = e.integer("hidden", 1, kMaxHidden), width = e.integer("intermediate", 1, kMaxFfn);
    const Accelerator acc = read_accelerator(r, "accelerator");
    const double eff = r.opt_number("efficiency").value_or(0.4);
    if (!(eff > 0 && eff <= 1)) r.fail("efficiency", "must be in (0, 1], e.g. 40%");
    s.row_time = expert_row_time(expert_row_flops(hidden, width), acc.peak_bf16_flops * eff);
    if (s.row_time <= 0) r.fail("accelerator", "the accelerator has no BF16 peak to derive the row time from");
    if (!r.has("row_bytes")) s.row_bytes = hidden * 2;  // one BF16 hidden vector
  }
  if (auto v = r.opt_bytes("row_bytes")) s.row_bytes = *v;
  if (auto v = r.opt_bandwidth("link")) s.link_bandwidth = *v;
}

}  // namespace

MoeScenario read_moe(const Reader& r) {
  std::vector<std::string> allowed = kMoeKeys;
  allowed.push_back("variants");
  r.only(allowed);
  for (const char* k : {"experts", "top_k", "tokens", "cards"})
    if (!r.has(k)) r.fail(k, "missing (required)");
  if (!r.has("row_time") && !r.has("expert"))
    r.fail("row_time", "missing: give row_time, or expert {hidden, intermediate} with accelerator and efficiency");
  MoeScenario out;
  apply(r, out.spec);
  if (out.spec.link_bandwidth > 0 && out.spec.row_bytes == 0)
    r.fail("row_bytes", "a link needs the bytes of one row on the wire (or expert.hidden)");
  out.variants = read_variants(r, out.spec, kMoeKeys, [](const Reader& v, auto& spec) { apply(v, spec); });
  return out;
}

}  // namespace stepsim::cli
