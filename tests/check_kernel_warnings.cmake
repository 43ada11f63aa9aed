# ctest kernel_warnings: builds the kernels of every example case — fused attention, combine, append,
# merge; the cv template's kernels; and the work-group shape GPUs get — with a fresh PoCL cache (so the
# compiler really runs) and IFA_BUILD_LOG=1, then fails on any compiler warning or error located in ifa's
# own kernel sources. Warnings PoCL's own headers raise (lines with "<Spelling=") are not ifa's. On a GPU
# the same runs show what the vendor's compiler says.
#   cmake -DRUN=ifa-run -DEXAMPLES=examples/ -DCACHE=DIR -P check_kernel_warnings.cmake
file(REMOVE_RECURSE ${CACHE})
file(MAKE_DIRECTORY ${CACHE})
set(ENV{POCL_CACHE_DIR} ${CACHE})
set(ENV{IFA_BUILD_LOG} 1)
set(runs
  "${EXAMPLES}|--mode|test"
  "--template|cv|--mode|test|${EXAMPLES}/sample_case.json|${EXAMPLES}/int8_kv_case.json"
  "TUNING=work_group_size=16,chunk_rows=128,vector_width=1,pv_block=1,append_work_group_size=16,append_heads=2|${EXAMPLES}|--mode|test"
  "TUNING=work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,vector_loads=1|${EXAMPLES}|--mode|test"
  "TUNING=work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,vector_loads=1,key_tile=1|${EXAMPLES}|--mode|test"
  "TUNING=work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,lanes=3|${EXAMPLES}|--mode|test"
  "TUNING=work_group_size=32,chunk_rows=32,vector_width=1,pv_block=1,lanes=3,lane_prefetch=1|${EXAMPLES}|--mode|test")
set(builds 0)
foreach(r ${runs})
  string(REPLACE "|" ";" args "${r}")
  unset(ENV{IFA_TUNING})
  list(GET args 0 first)
  if(first MATCHES "^TUNING=(.*)$")
    set(ENV{IFA_TUNING} ${CMAKE_MATCH_1})
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
# a fresh cache must have built many variants; too few means the log never reached this script
if(builds LESS 20)
  message(FATAL_ERROR "only ${builds} kernel builds were logged (IFA_BUILD_LOG or the fresh cache did not take)")
endif()
message(STATUS "${builds} kernel builds, no compiler warning in ifa's kernels")
