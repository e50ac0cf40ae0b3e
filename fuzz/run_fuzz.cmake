# cmake -DFUZZER=... -DCORPUS=... -DDICT=... -DWORK=... -DSECONDS=N -P run_fuzz.cmake
# The fuzz.validate test: fuzzes for SECONDS on a fresh copy of the seed corpus in WORK (the
# fuzzer adds the inputs it finds there, so the source tree's fuzz/corpus is never touched) and
# fails on any crash, sanitizer report, leak, timeout or out-of-memory. A failing input is
# written to WORK/artifacts/; replay it with `FUZZER WORK/artifacts/crash-...`.
foreach(v FUZZER CORPUS DICT WORK SECONDS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzz.cmake: -D${v}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${FUZZER}")
  message(FATAL_ERROR "${FUZZER} is not built (build the genhost_validate_fuzz target)")
endif()

file(REMOVE_RECURSE "${WORK}/corpus" "${WORK}/artifacts")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(GLOB seeds "${CORPUS}/*")
file(COPY ${seeds} DESTINATION "${WORK}/corpus")

set(args
  "${WORK}/corpus"
  -dict=${DICT}
  -max_total_time=${SECONDS}
  -rss_limit_mb=2048
  -max_len=1048576
  # No single input may take long: every request must be refused quickly.
  -timeout=10
  -artifact_prefix=${WORK}/artifacts/
  -print_final_stats=1)
message(STATUS "running ${FUZZER} ${args}")
execute_process(COMMAND "${FUZZER}" ${args} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB artifacts "${WORK}/artifacts/*")
  message(FATAL_ERROR "the fuzzer failed (exit ${rc}); reproducer(s): ${artifacts}\n"
                      "replay with: ${FUZZER} <reproducer>")
endif()
