#include "schedules/pipeline/action.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

namespace stepsim {

void Action::throw_stage_out_of_range(int s) {
  throw std::length_error(
      fmt::format("virtual stage {}: a pipeline has at most {} virtual stages", s, kMaxPipelineStages));
}

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
  // A schedule of stage s has s + 1 stages, at most kMaxPipelineStages.
  if (stage >= kMaxPipelineStages) {
    if (error) *error = fmt::format("'{}': stage {} is too large (at most {})", t, stage, kMaxPipelineStages - 1);
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
  // Room for each device's actions (forward and backward, W too when split, per micro-batch and
  // stage it holds; fewer for overlapped pairs), so that the lists grow once: grown by doubling,
  // a million-op plan touched twice its size in fresh pages and copied itself on the way.
  std::vector<std::size_t> per_device(std::max(devices, 0), 0);
  for (const int d : placement)
    if (d >= 0 && d < devices) per_device[d] += static_cast<std::size_t>(split ? 3 : 2) * std::max(microbatches, 0);
  plan.routes = {std::move(placement)};
  plan.route_of_micro.assign(microbatches, 0);
  plan.actions.assign(devices, {});
  for (int d = 0; d < devices; ++d) plan.actions[d].reserve(per_device[d]);
  return plan;
}

namespace {

// check_plan's passes over a plan: every slot (kind, stage, micro-batch) listed once, on its
// device; then every (stage, micro-batch) with its forward and one backward.
class PlanChecker {
 public:
  explicit PlanChecker(const PipelinePlan& plan)
      : plan_(plan),
        // One bit per slot (a million-op plan's table is 128 KB, not 4 MB of device numbers).
        seen_((4 * static_cast<std::size_t>(std::max(plan.stages, 0)) * std::max(plan.microbatches, 0) + 63) / 64, 0) {}

  std::vector<std::string> run() {
    for_each_slot([&](ActionKind k, int stage, int micro, int d) { note(k, stage, micro, d); });
    name_repeats();
    complete();
    return std::move(problems_);
  }

 private:
  // f(kind, stage, micro, device) for every slot listed, in list order (an overlapped pair is
  // its forward, then its backward).
  template <class F>
  void for_each_slot(F&& f) const {
    for (int d = 0; d < static_cast<int>(plan_.actions.size()); ++d)
      for (const Action& a : plan_.actions[d]) {
        if (a.kind == ActionKind::OverlapFB) {
          f(ActionKind::Forward, a.stage, a.micro, d);
          f(a.kind2, a.stage2, a.micro2, d);
        } else {
          f(a.kind, a.stage, a.micro, d);
        }
      }
  }
  bool in_range(int stage, int micro) const {
    return stage >= 0 && stage < plan_.stages && micro >= 0 && micro < plan_.microbatches;
  }
  std::size_t slot(ActionKind k, int stage, int micro) const {
    const int kind = k == ActionKind::Backward         ? 1
                     : k == ActionKind::BackwardInput  ? 2
                     : k == ActionKind::BackwardWeight ? 3
                                                       : 0;
    return (static_cast<std::size_t>(kind) * plan_.stages + stage) * plan_.microbatches + micro;
  }
  bool has(ActionKind k, int stage, int micro) const {
    const std::size_t at = slot(k, stage, micro);
    return (seen_[at / 64] >> (at % 64) & 1) != 0;
  }

  // The usual listing, inline: in range, on its route's device, the first of its slot (one bit
  // set). Anything else goes out of line, where its message is made.
  void note(ActionKind kind, int stage, int micro, int device) {
    if (in_range(stage, micro) && plan_.device_of(stage, micro) == device) [[likely]] {
      const std::size_t at = slot(kind, stage, micro);
      const std::uint64_t bit = std::uint64_t{1} << (at % 64);
      if ((seen_[at / 64] & bit) == 0) [[likely]] {
        seen_[at / 64] |= bit;
        return;
      }
    }
    note_problem(kind, stage, micro, device);
  }

  [[gnu::noinline, gnu::cold]] void note_problem(ActionKind kind, int stage, int micro, int device) {
    const Action a{kind, stage, micro};
    if (!in_range(stage, micro)) {
      problems_.push_back(
          fmt::format("device {}: {} names a stage or micro-batch out of range ({} stages, {} micro-batches)", device,
                      format_action(a), plan_.stages, plan_.microbatches));
      return;
    }
    const int want = plan_.device_of(stage, micro);
    if (want != device)
      problems_.push_back(fmt::format("device {}: {} belongs on device {}", device, format_action(a), want));
    const std::size_t at = slot(kind, stage, micro);
    if (has(kind, stage, micro)) {
      repeats_.push_back({problems_.size(), at, device, a});
      problems_.emplace_back();  // completed by name_repeats
    } else {
      seen_[at / 64] |= std::uint64_t{1} << (at % 64);
    }
  }

  // A repeated slot's message names the device that listed it first: found in one more pass
  // over the lists, whatever the number of repeats.
  void name_repeats() {
    if (repeats_.empty()) return;
    std::unordered_map<std::size_t, int> first;
    for (const Repeat& r : repeats_) first.emplace(r.slot, -1);
    for_each_slot([&](ActionKind k, int stage, int micro, int d) {
      if (!in_range(stage, micro)) return;
      const auto it = first.find(slot(k, stage, micro));
      if (it != first.end() && it->second < 0) it->second = d;
    });
    for (const Repeat& r : repeats_)
      problems_[r.problem] = fmt::format("device {}: {} is listed twice (also on device {})", r.device,
                                         format_action(r.action), first.at(r.slot));
  }

  // Each (stage, micro-batch) needs its forward and one backward: either full (B), or split into
  // I and W. Schedules may mix the two forms (DualPipe splits only some backwards). A stage's
  // micro-batches are checked 64 at a time, from the four kinds' bits side by side; a word with
  // anything amiss is gone through slot by slot (complete_slots) for its messages, in order.
  void complete() {
    const int m = plan_.microbatches;
    for (int s = 0; s < plan_.stages; ++s) {
      for (int i = 0; i < m; i += 64) {
        const int n = std::min(64, m - i);
        const std::uint64_t f = bits(ActionKind::Forward, s, i, n), b = bits(ActionKind::Backward, s, i, n);
        const std::uint64_t in = bits(ActionKind::BackwardInput, s, i, n),
                            w = bits(ActionKind::BackwardWeight, s, i, n);
        const std::uint64_t all = n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
        const std::uint64_t amiss = ~f | (b & (in | w)) | (~b & ~(in | w)) | (~b & (in ^ w));
        if ((amiss & all) != 0) [[unlikely]]
          complete_slots(s, i, i + n);
      }
    }
  }
  // `n` (<= 64) bits of kind k's slots for stage s from micro-batch i, the first in bit 0.
  std::uint64_t bits(ActionKind k, int s, int i, int n) const {
    const std::size_t at = slot(k, s, i), word = at / 64, shift = at % 64;
    std::uint64_t v = seen_[word] >> shift;
    if (shift != 0 && shift + static_cast<std::size_t>(n) > 64) v |= seen_[word + 1] << (64 - shift);
    return v;
  }

  [[gnu::noinline, gnu::cold]] void complete_slots(int s, int first, int last) {
    const auto missing = [&](ActionKind k, int stage, int i) {
      problems_.push_back(
          fmt::format("{} is missing (device {})", format_action(Action{k, stage, i}), plan_.device_of(stage, i)));
    };
    for (int i = first; i < last; ++i) {
      if (!has(ActionKind::Forward, s, i)) missing(ActionKind::Forward, s, i);
      const bool full = has(ActionKind::Backward, s, i);
      const bool input = has(ActionKind::BackwardInput, s, i), weight = has(ActionKind::BackwardWeight, s, i);
      if (full && (input || weight)) {
        problems_.push_back(fmt::format("{} is both a full backward and split into {} / {} (use one or the other)",
                                        format_action(Action{ActionKind::Backward, s, i}),
                                        format_action(Action{ActionKind::BackwardInput, s, i}),
                                        format_action(Action{ActionKind::BackwardWeight, s, i})));
      } else if (!full && !input && !weight) {
        if (plan_.split_backward) {
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

  struct Repeat {
    std::size_t problem, slot;
    int device;
    Action action;
  };
  const PipelinePlan& plan_;
  std::vector<std::uint64_t> seen_;
  std::vector<std::string> problems_;
  std::vector<Repeat> repeats_;
};

}  // namespace

std::vector<std::string> check_plan(const PipelinePlan& plan) { return PlanChecker(plan).run(); }

}  // namespace stepsim
