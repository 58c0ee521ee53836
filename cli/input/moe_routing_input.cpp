#include "cli/input/moe_routing_input.hpp"

#include <fmt/format.h>

namespace stepsim::cli {

MoeRoutingSpec read_routing(const Reader& r) {
  MoeRoutingSpec out;
  const YAML::Node n = r.node()["routing"];
  if (n.IsScalar()) {
    if (n.Scalar() != "balanced")
      r.fail("routing",
             fmt::format("unknown routing '{}' (balanced, {{hot_experts, hot_load}} or {{loads}})", n.Scalar()));
    return out;
  }
  const Reader c = r.child("routing");
  c.only({"hot_experts", "hot_load", "loads"});
  if (c.has("loads")) {
    if (c.has("hot_experts") || c.has("hot_load")) c.fail("loads", "give loads, or hot_experts and hot_load, not both");
    out.kind = MoeRoutingSpec::Kind::Explicit;
    const YAML::Node list = c.node()["loads"];
    if (!list.IsSequence()) c.fail("loads", "expected a list of rows, one per expert, e.g. [96, 32]");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string key = fmt::format("{}[{}]", c.key("loads"), i);
      std::string error;
      const auto v = list[i].IsScalar() ? whole_number(list[i].Scalar(), 0, INT64_MAX, error) : std::nullopt;
      if (!v) c.fail_at(list[i], key, "expected a whole number of rows (0 or more)");
      out.loads.push_back(*v);
    }
    return out;
  }
  if (!c.has("hot_experts") || !c.has("hot_load"))
    c.fail(c.has("hot_experts") ? "hot_load" : "hot_experts", "hot_experts and hot_load come together");
  out.kind = MoeRoutingSpec::Kind::Hot;
  out.hot_fraction = c.number("hot_experts");
  out.hot_load = c.number("hot_load");
  return out;
}

std::optional<double> read_capacity_factor(const Reader& r) {
  const YAML::Node n = r.node()["capacity_factor"];
  if (n.IsScalar() && n.Scalar() == "none") return std::nullopt;
  const double c = r.number("capacity_factor");
  if (!(c > 0)) r.fail("capacity_factor", "must be positive (or 'none' for a dropless layer)");
  return c;
}

ExpertPlacement read_placement(const Reader& r, const std::string& key) {
  const auto v = r.opt_text(key);
  if (!v) return ExpertPlacement::Contiguous;
  const auto p = parse_placement(*v);
  if (!p) r.fail(key, fmt::format("unknown placement '{}' (contiguous, round_robin)", *v));
  return *p;
}

}  // namespace stepsim::cli
