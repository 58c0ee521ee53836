#pragma once
// Commands that simulate many steps in a row (`stepsim bench`, `search`, `check-against`,
// `calibrate`) allocate and free the same large arrays again and again. By default glibc hands
// blocks over 128 KiB back to the kernel (mmap / munmap, with a threshold that only adapts
// upward) and trims the top of the heap, so each simulation faults its pages in anew: 184,000
// page faults, 15 % of the CPU, in the GPT-3 search; two workers fault more still, which kept the
// 1,000-variant suite at 1.5-1.7x on 2 cores. Keeping freed blocks of up to 32 MiB (glibc's
// largest threshold) in the heap lets the next simulation reuse them (9,000 faults). Single runs
// keep glibc's defaults: they free nothing early.
namespace stepsim::cli {

void reuse_freed_memory();

}  // namespace stepsim::cli
