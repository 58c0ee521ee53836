#include "cli/input/scenario_data_parallel.hpp"

#include <fmt/format.h>

#include "cli/input/model_files.hpp"
#include "models/training_state.hpp"

namespace stepsim::cli {

namespace {

const std::vector<std::string> kKeys = {"model",
                                        "accelerator",
                                        "layers",
                                        "efficiency",
                                        "sequence_length",
                                        "microbatch_size",
                                        "weight_bytes",
                                        "gradient_bytes",
                                        "cards",
                                        "cards_per_host",
                                        "nic",
                                        "link_bandwidth",
                                        "alpha",
                                        "zero_stage",
                                        "microbatches",
                                        "prefetch",
                                        "keep_gathered",
                                        "bucket_size",
                                        "backward_order",
                                        "input_wait",
                                        "stragglers",
                                        "fold"};

std::vector<DataParallelUnit> read_units(const Reader& r) {
  std::vector<DataParallelUnit> units;
  for (const auto& name : r.keys()) {
    const Reader u = r.child(name);
    u.only({"forward", "backward", "backward_input", "backward_weight", "weights", "gradients", "gather", "reduce"});
    DataParallelUnit unit;
    unit.name = name;
    unit.forward = u.opt_duration("forward").value_or(0);
    const auto fused = u.opt_duration("backward");
    const auto dx = u.opt_duration("backward_input");
    const auto dw = u.opt_duration("backward_weight");
    if (fused && (dx || dw)) u.fail("backward", "give backward, or backward_input and backward_weight, not both");
    if (dx.has_value() != dw.has_value())
      u.fail(dx ? "backward_input" : "backward_weight", "backward_input and backward_weight come together");
    unit.backward_split = dx.has_value();
    unit.backward_input = dx ? *dx : fused.value_or(0);
    unit.backward_weight = dw.value_or(0);
    unit.weights = u.opt_bytes("weights").value_or(0);
    unit.gradients = u.opt_bytes("gradients").value_or(0);
    unit.gather = u.opt_duration("gather");
    unit.reduce = u.opt_duration("reduce");
    units.push_back(std::move(unit));
  }
  if (units.empty())
    r.fail_at(r.node(), r.path(), "expected at least one layer: name: {forward: ..., backward: ..., gradients: ...}");
  return units;
}

// Applies the keys present in `r` over `s` (the base section, or a variant over the base).
void apply(const Reader& r, DataParallelSpec& s) {
  if (r.has("model")) s.model = read_transformer(r, "model");
  if (r.has("accelerator")) s.accelerator = read_accelerator(r, "accelerator");
  if (r.has("layers")) s.units = read_units(r.child("layers"));
  if (auto v = r.opt_number("efficiency")) {
    if (!(*v > 0 && *v <= 1)) r.fail("efficiency", "must be in (0, 1], e.g. 0.4 or 40%");
    s.efficiency = *v;
  }
  if (auto v = r.opt_integer("sequence_length")) s.sequence_length = *v;
  if (auto v = r.opt_count("microbatch_size")) s.microbatch_size = *v;
  for (const char* k : {"weight_bytes", "gradient_bytes"})
    if (r.has(k) && r.count(k) > kMaxBytesPerParameter)
      r.fail(k, fmt::format("{} bytes per parameter is too many (at most {})", r.count(k), kMaxBytesPerParameter));
  if (auto v = r.opt_count("weight_bytes")) s.weight_bytes = *v;
  if (auto v = r.opt_count("gradient_bytes")) s.gradient_bytes = *v;
  if (auto v = r.opt_count("cards")) s.cards = *v;
  if (auto v = r.opt_count("cards_per_host")) s.host.cards = *v;
  if (r.has("nic")) {
    const Reader n = r.child("nic");
    n.only({"count", "bandwidth", "shared"});
    if (auto v = n.opt_count("count")) s.host.nics = *v;
    if (auto v = n.opt_bandwidth("bandwidth")) s.host.nic_bandwidth = *v;
    s.host.cards_share_nic = n.flag("shared", s.host.cards_share_nic);
  }
  if (auto v = r.opt_bandwidth("link_bandwidth")) s.link_bandwidth = *v;
  if (auto v = r.opt_duration("alpha")) s.alpha = *v;
  if (auto v = r.opt_integer("zero_stage", 0)) {
    if (*v != 0 && *v != 3)
      r.fail("zero_stage", fmt::format("zero_stage {} is not simulated (0 = DDP, 3 = ZeRO-3)", *v));
    s.zero_stage = static_cast<int>(*v);
  }
  if (auto v = r.opt_count("microbatches")) s.microbatches = *v;
  if (auto v = r.opt_count("prefetch", 0)) s.prefetch = *v;
  s.keep_gathered = r.flag("keep_gathered", s.keep_gathered);
  if (auto v = r.opt_bytes("bucket_size")) {
    if (*v < 1) r.fail("bucket_size", "must be positive");
    s.bucket_size = *v;
  }
  if (auto v = r.opt_text("backward_order")) {
    const auto o = parse_backward_order(*v);
    if (!o) r.fail("backward_order", fmt::format("unknown order '{}' (fused, dx_first, dw_first)", *v));
    s.backward_order = *o;
  }
  if (auto v = r.opt_duration("input_wait")) s.input_wait = *v;
  if (r.has("stragglers")) {
    const Reader st = r.child("stragglers");
    s.stragglers.clear();
    for (const auto& k : st.keys()) {
      std::size_t used = 0;
      int card = -1;
      try {
        card = std::stoi(k, &used);
      } catch (...) { used = 0; }
      if (used == 0 || used != k.size() || card < 0)
        st.fail(k, "expected a card number, e.g. '5: 1.1' (card 5 computes 1.1x slower)");
      const double scale = st.number(k);
      if (!(scale > 0)) st.fail(k, "the compute multiplier must be positive");
      s.stragglers[card] = scale;
    }
  }
  s.fold = r.flag("fold", s.fold);
}

}  // namespace

DataParallelScenario read_data_parallel(const Reader& r) {
  std::vector<std::string> allowed = kKeys;
  allowed.push_back("variants");
  r.only(allowed);
  if (r.has("model") && r.has("layers")) r.fail("layers", "give a model or explicit layers, not both");
  DataParallelScenario out;
  apply(r, out.spec);
  out.variants = read_variants(r, out.spec, kKeys, [](const Reader& v, auto& spec) { apply(v, spec); });
  return out;
}

}  // namespace stepsim::cli
