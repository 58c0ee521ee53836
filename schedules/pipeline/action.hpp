#pragma once
// Actions: what a pipeline schedule decides, and nothing about time.
//
// A schedule turns (devices, micro-batches, virtual stages) into one ordered action list per
// device, in the compact notation of PyTorch's torch.distributed.pipelining: `0F3` is stage 0's
// forward of micro-batch 3, `1I3` / `1W3` the input- and weight-gradient halves of stage 1's
// backward, `1B3` a full backward. The engine decides when each action runs.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepsim {

enum class ActionKind : char {
  Forward = 'F',
  Backward = 'B',        // full backward: input and weight gradients in one op
  BackwardInput = 'I',   // dX only (zero-bubble split)
  BackwardWeight = 'W',  // dW only
  // A forward and a backward of different micro-batches run as one compute op (DualPipe's
  // overlapped pair): `stage`/`micro` name the forward, `stage2`/`micro2` the backward half,
  // whose kind is `kind2` (Backward or BackwardInput).
  OverlapFB = 'O',
};

// The most devices and virtual stages a pipeline may have: an action's stage is 16 bits.
inline constexpr int kMaxPipelineStages = 32767;

// 16 bytes: a plan holds one per compute op until the lowering has made the ops (a million-op
// step's lists were 24 bytes an action). Stages are below kMaxPipelineStages: the constructor
// checks (parse_action names the text first, plan_for turns a schedule's overflow into a SpecError).
struct Action {
  ActionKind kind = ActionKind::Forward;
  ActionKind kind2 = ActionKind::Backward;
  std::int16_t stage = 0;  // virtual stage: position along the model, 0 .. stages-1
  std::int16_t stage2 = -1;
  std::int32_t micro = 0;
  std::int32_t micro2 = -1;

  Action() = default;
  // Throws std::length_error for a stage of kMaxPipelineStages or more (a schedule asked for more
  // virtual stages than a pipeline may have).
  Action(ActionKind k, int s, int i, int s2 = -1, int i2 = -1, ActionKind k2 = ActionKind::Backward)
      : kind(k), kind2(k2), stage(narrow_stage(s)), stage2(narrow_stage(s2)), micro(i), micro2(i2) {}
  bool operator==(const Action&) const = default;

 private:
  static std::int16_t narrow_stage(int s) {
    if (s >= kMaxPipelineStages || s < -1) [[unlikely]]
      throw_stage_out_of_range(s);
    return static_cast<std::int16_t>(s);
  }
  [[noreturn, gnu::cold]] static void throw_stage_out_of_range(int s);
};
static_assert(sizeof(Action) == 16);

// `0F3`; an overlapped pair as `0F3+5B1`.
std::string format_action(const Action& a);
// Parses the notation above, and PyTorch's spelling of an overlapped pair,
// `(0F3;5B1)OVERLAP_F_B`; nullopt with `error` set on bad text.
std::optional<Action> parse_action(std::string_view text, std::string* error);

// Which device runs virtual stage s for micro-batch i. Most schedules place a stage on one
// device for every micro-batch; DualPipe sends the second half of the micro-batches along the
// mirrored route, so placement is per route.
struct PipelinePlan {
  int devices = 0;
  int stages = 0;  // virtual stages along the model
  int microbatches = 0;
  bool split_backward = false;               // some backwards are split into I and W
  std::vector<std::vector<int>> routes;      // routes[r][s] = device of stage s on route r
  std::vector<int> route_of_micro;           // per micro-batch
  std::vector<std::vector<Action>> actions;  // per device, in execution order
  // Where blocking point-to-point communication puts its exchanges (PipelineCosts::blocking_sends):
  // per device, per action, true where the action and the next one run without an exchange
  // between them. Megatron-LM's interleaved steady state sends and receives once per forward-backward
  // pair; empty (every other schedule): an exchange after every action.
  std::vector<std::vector<bool>> paired_with_next;

  int device_of(int stage, int micro) const { return routes[route_of_micro[micro]][stage]; }
  // Frees the action lists once a lowering has turned them into ops (lower() does); placement
  // (routes) stays.
  void release_actions() {
    std::vector<std::vector<Action>>().swap(actions);
    std::vector<std::vector<bool>>().swap(paired_with_next);
  }
  // Distinct (device, stage) pairs: how many stage copies of parameters each device holds.
  std::vector<int> stage_copies_per_device() const;
};

// Plan with one route: stage s on device placement[s], for every micro-batch.
PipelinePlan single_route_plan(int devices, std::vector<int> placement, int microbatches, bool split);

// Checks a plan: every required action exactly once, on the device its route names; each
// (stage, micro-batch) has F and either B or both I and W. Returns one message per problem,
// actions named in the notation above.
std::vector<std::string> check_plan(const PipelinePlan& plan);

}  // namespace stepsim
