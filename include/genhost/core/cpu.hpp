// genhost/core/cpu.hpp
//
// GENHOST_CPU_CLONES marks a hot per-pixel loop to be compiled twice, for AVX2 and for the
// baseline, with the variant picked at load time (GCC's target_clones on x86-64 Linux; nothing
// elsewhere). Only for integer or byte-copy code, whose every variant gives the same bytes.
#pragma once

#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) && defined(__linux__)
#define GENHOST_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GENHOST_CPU_CLONES
#endif
