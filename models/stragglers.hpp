#pragma once
// Stragglers: a synchronous step waits for the slowest card (section 10.4.5). With N cards whose
// compute times are independent normals N(mu, sigma^2), the step's compute is E[max] =
// mu + e_N sigma, where e_N = E[max of N standard normals]
//     = integral of x * N phi(x) Phi(x)^(N-1) dx
// computed here by numerical integration (e_8 ~ 1.42, e_48 ~ 2.23, e_1024 ~ 3.25). Correlation,
// periodic jitter and persistently slow cards are not modelled.
#include "sim/time.hpp"

namespace stepsim {

double expected_max_standard_normal(int n);

// mu + e_N sigma.
Time expected_slowest(Time mean, Time sigma, int n);

}  // namespace stepsim
