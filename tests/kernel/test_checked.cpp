// sim/checked.hpp: the one way to add, multiply and convert values a user controls.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>

#include "sim/checked.hpp"

using namespace stepsim;

namespace {
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

std::string overflow_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const OverflowError& e) { return e.what(); }
  return "no error";
}
}  // namespace

TEST_CASE("checked_add and checked_mul give the exact int64 result or nothing", "[checked]") {
  CHECK(checked_add(2, 3) == 5);
  CHECK(checked_add(kMax - 1, 1) == kMax);
  CHECK_FALSE(checked_add(kMax, 1).has_value());
  CHECK_FALSE(checked_add(kMin, -1).has_value());
  CHECK(checked_mul(4'294'967'296, 2'147'483'647) == 9'223'372'032'559'808'512);
  CHECK_FALSE(checked_mul(4'294'967'296, 2'147'483'648).has_value());        // 2^63
  CHECK_FALSE(checked_mul(65'536, 65'536LL * 65'536 * 65'536).has_value());  // 2^64: a suite's variant count
  CHECK(checked_mul(kMin, 1) == kMin);
  CHECK_FALSE(checked_mul(kMin, -1).has_value());
}

TEST_CASE("ceil_div rounds up without overflowing near the int64 end", "[checked]") {
  CHECK(ceil_div(0, 8) == 0);
  CHECK(ceil_div(48, 8) == 6);
  CHECK(ceil_div(49, 8) == 7);
  CHECK(ceil_div(2'147'483'647, 8) == 268'435'456);  // "-536870911 hosts" came from (cards + 7) / 8 in int
  CHECK(ceil_div(kMax, 2) == 4'611'686'018'427'387'904);
}

TEST_CASE("to_int64 rounds to the nearest and refuses what does not fit", "[checked]") {
  CHECK(to_int64(2.5) == 3);
  CHECK(to_int64(-2.5) == -3);
  CHECK(to_int64(1e18) == 1'000'000'000'000'000'000);
  CHECK(to_int64(9223372036854774784.0) == 9'223'372'036'854'774'784);  // the largest double below 2^63
  CHECK_FALSE(to_int64(9223372036854775808.0).has_value());             // 2^63
  CHECK(to_int64(-9223372036854775808.0) == kMin);
  CHECK_FALSE(to_int64(1e300).has_value());  // scale_out.mfu 1e-300 gave -9223372036854775808 cards
  CHECK_FALSE(to_int64(-1e300).has_value());
  CHECK_FALSE(to_int64(std::numeric_limits<double>::infinity()).has_value());
  CHECK_FALSE(to_int64(std::nan("")).has_value());
}

TEST_CASE("time_add, time_mul and time_from_ns throw a TimeOverflowError naming the value", "[checked]") {
  CHECK(time_add(kSecond, kMillisecond, "x") == 1'001'000'000);
  CHECK(time_mul(12 * kSecond, 31'790, "x") == 381'480 * kSecond);
  CHECK(time_from_ns(1.5e9, "x") == 1'500'000'000);
  CHECK(overflow_message([] { time_add(kMax, 1, "the completion time"); }) ==
        "too large: the completion time would exceed 292 years of simulated time");
  CHECK(overflow_message([] { time_mul(kMax / 2 + 1, 2, "the training time"); }) ==
        "too large: the training time would exceed 292 years of simulated time");
  CHECK(overflow_message([] { time_from_ns(1e19, "the compute time"); }) ==
        "too large: the compute time would exceed 292 years of simulated time");
  CHECK(overflow_message([] { time_from_ns(std::nan(""), "a ratio"); }) ==
        "too large: a ratio would exceed 292 years of simulated time");
}

TEST_CASE("time_from_seconds_up rounds a cost up to the next nanosecond, never to zero", "[checked]") {
  CHECK(time_from_seconds_up(1.5, "x") == 1'500'000'000);
  CHECK(time_from_seconds_up(1e-12, "x") == 1);  // a thousandth of a nanosecond: one
  CHECK(time_from_seconds_up(2.0000000001, "x") == 2'000'000'001);
  CHECK(time_from_seconds_up(0.0, "x") == 0);
  CHECK(time_from_seconds_up(-3.0, "x") == 0);  // none
  CHECK(overflow_message([] { time_from_seconds_up(1e10, "a step's phase"); }) ==
        "too large: a step's phase would exceed 292 years of simulated time");
  CHECK(overflow_message([] { time_from_seconds_up(std::nan(""), "a step's phase"); }) ==
        "too large: a step's phase would exceed 292 years of simulated time");
}

TEST_CASE("bytes_from truncates like a cast and refuses what is past 1 EiB", "[checked]") {
  CHECK(bytes_from(1.9, "x") == 1);
  CHECK(bytes_from(0.0, "x") == 0);
  CHECK(bytes_from(static_cast<double>(kMaxBytes), "x") == Bytes{1} << 60);
  CHECK(overflow_message([] { bytes_from(2.0 * static_cast<double>(kMaxBytes), "the activations per GPU"); }) ==
        "too large: the activations per GPU would exceed 1 EiB");
  CHECK(overflow_message([] { bytes_from(1e300, "a micro-batch's logits"); }) ==
        "too large: a micro-batch's logits would exceed 1 EiB");
  CHECK(overflow_message([] { bytes_from(std::nan(""), "x"); }) == "too large: x would exceed 1 EiB");
  CHECK(overflow_message([] { bytes_from(-1e19, "x"); }) == "too large: x would exceed 1 EiB");
  // A time past its limit is an OverflowError too: one catch serves both.
  CHECK(overflow_message([] { time_add(kMax, 1, "y"); }) == "too large: y would exceed 292 years of simulated time");
}
