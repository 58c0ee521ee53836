#include "schedules/pipeline/action.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace stepsim {

std::string format_action(const Action& a) {
  if (a.kind == ActionKind::OverlapFB)
    return fmt::format("{}F{}+{}{}{}", a.stage, a.micro, a.stage2, static_cast<char>(a.kind2), a.micro2);
  return fmt::format("{}{}{}", a.stage, static_cast<char>(a.kind), a.micro);
}

namespace {
std::optional<Action> parse_simple(std::string_view t, std::string* error) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  int stage = 0, micro = 0;
  auto* p = t.data();
  auto* end = t.data() + t.size();
  auto r1 = std::from_chars(p, end, stage);
  if (r1.ec != std::errc{} || r1.ptr == end) {
    if (error) *error = fmt::format("'{}' is not an action like 0F3", t);
    return std::nullopt;
  }
  const char k = *r1.ptr;
  if (k != 'F' && k != 'B' && k != 'I' && k != 'W') {
    if (error) *error = fmt::format("'{}': unknown op letter '{}' (expected F, B, I or W)", t, k);
    return std::nullopt;
  }
  auto r2 = std::from_chars(r1.ptr + 1, end, micro);
  if (r2.ec != std::errc{} || r2.ptr != end || stage < 0 || micro < 0) {
    if (error) *error = fmt::format("'{}' is not an action like 0F3", t);
    return std::nullopt;
  }
  // A schedule of stage s has s + 1 stages, a count held in an int.
  if (stage == std::numeric_limits<int>::max()) {
    if (error) *error = fmt::format("'{}': stage {} is too large (at most {})", t, stage, stage - 1);
    return std::nullopt;
  }
  return Action{static_cast<ActionKind>(k), stage, micro};
}
}  // namespace

std::optional<Action> parse_action(std::string_view text, std::string* error) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  // PyTorch writes an overlapped pair as its sub-actions: `(0F3;5B1)OVERLAP_F_B`.
  constexpr std::string_view kOverlapSuffix = ")OVERLAP_F_B";
  std::string_view forward_text, backward_text;
  if (!text.empty() && text.front() == '(' && text.size() > kOverlapSuffix.size() &&
      text.substr(text.size() - kOverlapSuffix.size()) == kOverlapSuffix) {
    const std::string_view inner = text.substr(1, text.size() - 1 - kOverlapSuffix.size());
    const auto semi = inner.find(';');
    if (semi == std::string_view::npos) {
      if (error) *error = fmt::format("'{}': an overlapped pair names two actions, like (0F3;5B1)OVERLAP_F_B", text);
      return std::nullopt;
    }
    forward_text = inner.substr(0, semi);
    backward_text = inner.substr(semi + 1);
  } else {
    const auto plus = text.find('+');
    if (plus == std::string_view::npos) return parse_simple(text, error);
    forward_text = text.substr(0, plus);
    backward_text = text.substr(plus + 1);
  }
  auto f = parse_simple(forward_text, error);
  auto b = f ? parse_simple(backward_text, error) : std::nullopt;
  if (!f || !b) return std::nullopt;
  if (f->kind != ActionKind::Forward || (b->kind != ActionKind::Backward && b->kind != ActionKind::BackwardInput)) {
    if (error) *error = fmt::format("'{}': an overlapped pair is a forward then a backward, like 0F3+5B1", text);
    return std::nullopt;
  }
  return Action{ActionKind::OverlapFB, f->stage, f->micro, b->stage, b->micro, b->kind};
}

std::vector<int> PipelinePlan::stage_copies_per_device() const {
  std::set<std::pair<int, int>> held;
  for (const auto& route : routes)
    for (int s = 0; s < stages; ++s) held.emplace(route[s], s);
  std::vector<int> copies(devices, 0);
  for (const auto& [d, s] : held) ++copies[d];
  return copies;
}

PipelinePlan single_route_plan(int devices, std::vector<int> placement, int microbatches, bool split) {
  PipelinePlan plan;
  plan.devices = devices;
  plan.stages = static_cast<int>(placement.size());
  plan.microbatches = microbatches;
  plan.split_backward = split;
  plan.routes = {std::move(placement)};
  plan.route_of_micro.assign(microbatches, 0);
  plan.actions.assign(devices, {});
  return plan;
}

std::vector<std::string> check_plan(const PipelinePlan& plan) {
  std::vector<std::string> problems;
  // (kind, stage, micro) -> device it was listed on (-1: not listed); a flat table, since every
  // slot is asked about below.
  const auto kind_index = [](ActionKind k) {
    switch (k) {
      case ActionKind::Forward: return 0;
      case ActionKind::Backward: return 1;
      case ActionKind::BackwardInput: return 2;
      case ActionKind::BackwardWeight: return 3;
      case ActionKind::OverlapFB: break;
    }
    return 0;
  };
  const auto slot = [&](ActionKind k, int stage, int micro) {
    return (static_cast<std::size_t>(kind_index(k)) * plan.stages + stage) * plan.microbatches + micro;
  };
  std::vector<int> seen(4 * static_cast<std::size_t>(std::max(plan.stages, 0)) * std::max(plan.microbatches, 0), -1);
  auto note = [&](ActionKind kind, int stage, int micro, int device) {
    const Action a{kind, stage, micro};
    if (stage < 0 || stage >= plan.stages || micro < 0 || micro >= plan.microbatches) {
      problems.push_back(
          fmt::format("device {}: {} names a stage or micro-batch out of range ({} stages, {} micro-batches)", device,
                      format_action(a), plan.stages, plan.microbatches));
      return;
    }
    const int want = plan.device_of(stage, micro);
    if (want != device)
      problems.push_back(fmt::format("device {}: {} belongs on device {}", device, format_action(a), want));
    int& listed = seen[slot(kind, stage, micro)];
    if (listed >= 0)
      problems.push_back(
          fmt::format("device {}: {} is listed twice (also on device {})", device, format_action(a), listed));
    else
      listed = device;
  };
  for (int d = 0; d < static_cast<int>(plan.actions.size()); ++d) {
    for (const Action& a : plan.actions[d]) {
      if (a.kind == ActionKind::OverlapFB) {
        note(ActionKind::Forward, a.stage, a.micro, d);
        note(a.kind2, a.stage2, a.micro2, d);
      } else {
        note(a.kind, a.stage, a.micro, d);
      }
    }
  }
  // Each (stage, micro-batch) needs its forward and one backward: either full (B), or split into
  // I and W. Schedules may mix the two forms (DualPipe splits only some backwards).
  const auto has = [&](ActionKind k, int s, int i) { return seen[slot(k, s, i)] >= 0; };
  const auto missing = [&](ActionKind k, int s, int i) {
    problems.push_back(fmt::format("{} is missing (device {})", format_action(Action{k, s, i}), plan.device_of(s, i)));
  };
  for (int s = 0; s < plan.stages; ++s) {
    for (int i = 0; i < plan.microbatches; ++i) {
      if (!has(ActionKind::Forward, s, i)) missing(ActionKind::Forward, s, i);
      const bool full = has(ActionKind::Backward, s, i);
      const bool input = has(ActionKind::BackwardInput, s, i), weight = has(ActionKind::BackwardWeight, s, i);
      if (full && (input || weight)) {
        problems.push_back(fmt::format("{} is both a full backward and split into {} / {} (use one or the other)",
                                       format_action(Action{ActionKind::Backward, s, i}),
                                       format_action(Action{ActionKind::BackwardInput, s, i}),
                                       format_action(Action{ActionKind::BackwardWeight, s, i})));
      } else if (!full && !input && !weight) {
        if (plan.split_backward) {
          missing(ActionKind::BackwardInput, s, i);
          missing(ActionKind::BackwardWeight, s, i);
        } else {
          missing(ActionKind::Backward, s, i);
        }
      } else if (input != weight) {
        missing(input ? ActionKind::BackwardWeight : ActionKind::BackwardInput, s, i);
      }
    }
  }
  return problems;
}

}  // namespace stepsim
