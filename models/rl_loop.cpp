#include "models/rl_loop.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

namespace stepsim {

Time DurationDist::mean() const {
  switch (kind) {
    case Kind::Fixed: return a;
    case Kind::Uniform: return a + (b - a) / 2;
    case Kind::Exponential: return a;
  }
  return a;
}

std::optional<RatePpm> parse_rate(const std::string& text, std::string* error) {
  const auto fail = [&](const std::string& why) -> std::optional<RatePpm> {
    if (error) *error = why;
    return std::nullopt;
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) return fail(fmt::format("'{}' is not a rate like 12/s", text));
  std::string number = text.substr(0, slash), unit = text.substr(slash + 1);
  const auto trim = [](std::string& s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  };
  trim(number);
  trim(unit);
  std::int64_t per_seconds = 0;
  if (unit == "s")
    per_seconds = 1;
  else if (unit == "min")
    per_seconds = 60;
  else if (unit == "h")
    per_seconds = 3600;
  else
    return fail(fmt::format("'{}': unknown time unit '{}' (use /s, /min or /h)", text, unit));
  // Exact decimal: digits and at most 6 fraction digits.
  __int128 value = 0;
  int fraction_digits = -1;
  for (char c : number) {
    if (c == '.' && fraction_digits < 0) {
      fraction_digits = 0;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) return fail(fmt::format("'{}' is not a rate like 12/s", text));
    if (fraction_digits >= 6) return fail(fmt::format("'{}': at most 6 decimals", text));
    value = value * 10 + (c - '0');
    if (fraction_digits >= 0) ++fraction_digits;
    if (value > (__int128{1} << 80)) return fail(fmt::format("'{}' is too large", text));
  }
  if (number.empty() || number == ".") return fail(fmt::format("'{}' is not a rate like 12/s", text));
  for (int k = std::max(fraction_digits, 0); k < 6; ++k) value *= 10;
  value /= per_seconds;  // exact for /s; /min and /h round down to a millionth per second
  if (value <= 0) return fail(fmt::format("'{}' must be positive", text));
  // An item takes 1e15 / rate ns: past 10^9 items a second it would take less than the 1 ns tick
  // (and the value would not fit the int64 it is kept in).
  if (value > __int128{kSecond} * kPpm)
    return fail(fmt::format("'{}' is too large: at most 1000000000/s (one item per nanosecond)", text));
  return static_cast<RatePpm>(value);
}

Time even_share(Time total, std::int64_t n, std::int64_t k) {
  if (n <= 0) return 0;
  const __int128 t = total;
  return static_cast<Time>((t * (k + 1)) / n - (t * k) / n);
}

Time rate_item_time(RatePpm rate, std::int64_t k) {
  // 1 s / (rate / 1e6) = 1e15 / rate ns per item; even shares of it keep the sum exact.
  const __int128 unit = static_cast<__int128>(kSecond) * kPpm;
  return static_cast<Time>(unit * (k + 1) / rate - unit * k / rate);
}

bool kept_evenly(std::int64_t i, std::int64_t kept_ppm) {
  const __int128 q = kept_ppm;
  return (q * (i + 1)) / kPpm - (q * i) / kPpm == 1;
}

const char* stage_name(int index) {
  switch (index) {
    case 0: return "generation";
    case 1: return "verification";
    case 2: return "learning";
  }
  return "?";
}

std::optional<FlowBound> flow_bound(const RlLoopSpec& spec) {
  const double q = static_cast<double>(spec.kept_ppm) / kPpm;
  FlowBound fb;
  fb.capacity.assign(3, 0.0);
  const RlStageSpec* stages[3] = {&spec.generation, &spec.verification, &spec.learning};
  bool any = false;
  for (int s = 0; s < 3; ++s) {
    const RlStageSpec& st = *stages[s];
    if (!st.present() || !st.rate) continue;
    const double per_s = static_cast<double>(*st.rate) / kPpm * st.workers;
    fb.capacity[s] = s == 2 ? per_s : per_s * q;  // the learner sees only kept trajectories
    if (!any || fb.capacity[s] < fb.learner_rate) {
      fb.learner_rate = fb.capacity[s];
      fb.bottleneck = s;
    }
    any = true;
  }
  if (!any) return std::nullopt;
  return fb;
}

Time synchronous_period(Time generation, Time learning, Time sync) { return generation + learning + sync; }
Time asynchronous_period(Time generation, Time learning, Time sync) { return std::max(generation, learning) + sync; }

Fraction async_break_even(Time sync_period, Time async_period) {
  std::int64_t a = async_period, b = sync_period;
  while (b != 0) {
    const std::int64_t t = a % b;
    a = b;
    b = t;
  }
  const std::int64_t g = a == 0 ? 1 : a;
  return {async_period / g, sync_period / g};
}

namespace {
// One batch's wall time on a stage: `items` trajectories split over the workers.
Time stage_batch_time(const RlStageSpec& st, std::int64_t items) {
  if (!st.present()) return 0;
  if (st.rate) {
    const std::int64_t per_worker = (items + st.workers - 1) / st.workers;
    const __int128 unit = static_cast<__int128>(kSecond) * kPpm;
    return static_cast<Time>(unit * per_worker / *st.rate);
  }
  if (st.length) return st.length->mean() * ((items + st.workers - 1) / st.workers);
  if (st.batch_time) return st.batch_time->mean() / st.workers;  // one worker's time, split
  return 0;
}
}  // namespace

BatchTimes batch_times(const RlLoopSpec& spec) {
  BatchTimes bt;
  bt.learned = static_cast<std::int64_t>(static_cast<__int128>(spec.batch_size) * spec.kept_ppm / kPpm);
  bt.generation = std::max(stage_batch_time(spec.generation, spec.batch_size),
                           stage_batch_time(spec.verification, spec.batch_size));
  bt.learning = stage_batch_time(spec.learning, bt.learned);
  return bt;
}

Time model_period(const RlLoopSpec& spec) {
  const BatchTimes bt = batch_times(spec);
  return spec.mode == RlMode::Synchronous ? synchronous_period(bt.generation, bt.learning, spec.sync)
                                          : asynchronous_period(bt.generation, bt.learning, spec.sync);
}

double model_learner_rate(const RlLoopSpec& spec) {
  const Time p = model_period(spec);
  if (p <= 0) return 0.0;
  double learned = static_cast<double>(batch_times(spec).learned);
  if (spec.updates == WeightUpdates::InFlight && spec.interrupted == Interrupted::Discard) {
    const auto& g = spec.generation;
    DurationDist length;  // a trajectory's generation time
    if (g.length)
      length = *g.length;
    else if (g.rate)
      length.a = rate_item_time(*g.rate, 0);
    else if (g.batch_time)
      length.a = g.batch_time->mean() / spec.batch_size;
    learned *= expected_survival(length, 1.0 / to_s(p));
  }
  return learned / to_s(p);
}

double effective_throughput(int batch_size, double kept, Time period) {
  return period <= 0 ? 0.0 : batch_size * kept / to_s(period);
}

double survival_probability(double seconds, double lambda_per_s) { return std::exp(-lambda_per_s * seconds); }

double mean_kept_length_discarding(double mean_s, double lambda_per_s) {
  return mean_s / (1.0 + lambda_per_s * mean_s);
}

double expected_survival(const DurationDist& length, double lambda_per_s) {
  switch (length.kind) {
    case DurationDist::Kind::Fixed: return survival_probability(to_s(length.a), lambda_per_s);
    case DurationDist::Kind::Exponential: return 1.0 / (1.0 + lambda_per_s * to_s(length.a));
    case DurationDist::Kind::Uniform: {
      const double a = to_s(length.a), b = to_s(length.b);
      if (b <= a || lambda_per_s <= 0) return survival_probability(a, lambda_per_s);
      return (std::exp(-lambda_per_s * a) - std::exp(-lambda_per_s * b)) / (lambda_per_s * (b - a));
    }
  }
  return 1.0;
}

}  // namespace stepsim
