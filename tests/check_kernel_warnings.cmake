# ctest kernel_warnings: builds and runs the kernels of every example case — fused attention, combine, append,
# merge; the cv template's kernels; and the work-group shapes no other ctest entry builds them in (8-wide loads,
# the key tile, the lane shape with 3 rows a step and its prefetch) — with -Werror (IFA_KERNEL_WERROR=1), so a
# compiler warning in any of these variants fails its build, and with IFA_BUILD_LOG=1, failing as well on a
# warning located in ifa's own kernel sources that reaches the log. PoCL's kernel cache is shared with the
# rest of the suite (which scripts/test runs with -Werror too): a variant another test built is not compiled
# again, and one in the cache was built with -Werror from the same source. On a GPU the same runs show what the
# vendor's compiler says.
#   cmake -DRUN=ifa-run -DEXAMPLES=examples/ -P check_kernel_warnings.cmake
set(ENV{IFA_KERNEL_WERROR} 1)
set(ENV{IFA_BUILD_LOG} 1)
set(runs
  "${EXAMPLES}|--mode|test"
  "--template|cv|--mode|test|${EXAMPLES}/sample_case.json|${EXAMPLES}/int8_kv_case.json"
  "TUNING=work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,vector_loads=1|${EXAMPLES}|--mode|test"
  "TUNING=work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,vector_loads=1,key_tile=1|${EXAMPLES}|--mode|test"
  "TUNING=work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,lanes=3,lane_prefetch=1|${EXAMPLES}|--mode|test")
set(builds 0)
foreach(r ${runs})
  string(REPLACE "|" ";" args "${r}")
  unset(ENV{IFA_TUNING})
  unset(ENV{IFA_CPU_OPT_DISABLE})
  list(GET args 0 first)
  if(first MATCHES "^TUNING=(.*)$")
    # a GPU shape: unoptimised on PoCL, as the suite's other runs of the GPU shapes (tests/CMakeLists.txt)
    set(ENV{IFA_TUNING} ${CMAKE_MATCH_1})
    set(ENV{IFA_CPU_OPT_DISABLE} 1)
    list(REMOVE_AT args 0)
  endif()
  execute_process(COMMAND ${RUN} ${args} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ifa-run ${args} exited ${rc}:\n${out}\n${err}")
  endif()
  string(REGEX MATCHALL "ifa_build_log: kernel=" logs "${err}")
  list(LENGTH logs n)
  math(EXPR builds "${builds} + ${n}")
  # clang (PoCL): "warning: FILE.cl:L:C: text"; NVIDIA's compiler: "<kernel>:L:C: warning: text"
  string(REGEX MATCHALL "(warning|error): [^ \n]*\\.cl:[0-9]+:[0-9]+: [^\n]*|<kernel>:[0-9]+:[0-9]+: (warning|error)[^\n]*"
    ours "${err}")
  if(ours)
    string(REPLACE ";" "\n" ours "${ours}")
    message(FATAL_ERROR "ifa-run ${args}: the compiler warns about ifa's kernels:\n${ours}\n\nfull log:\n${err}")
  endif()
endforeach()
# the program cache logs each program it builds whether or not PoCL's cache holds it: too few means the log
# never reached this script
if(builds LESS 20)
  message(FATAL_ERROR "only ${builds} kernel builds were logged (IFA_BUILD_LOG did not take)")
endif()
message(STATUS "${builds} kernel programs built with -Werror, no compiler warning in ifa's kernels")
