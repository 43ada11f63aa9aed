# IFA_VERBOSE=1 prints one line per run whose case={...} part ifa-run accepts back: run the sample with it,
# replay the printed case with --check, and require both to pass. An IncreFlashAttention line names the kernel
# shape (on PoCL's CPU the vector shape, the first candidate, so nothing was passed over).
set(ENV{IFA_VERBOSE} 1)
execute_process(COMMAND ${RUN} ${CASE} --check RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "sample run failed (${rc}): ${err}")
endif()
string(REGEX MATCH "ifa_verbose: [^\n]*" line "${err}")
if(NOT line MATCHES "op=IncreFlashAttention template=all_vector tiling_key=[0-9]+ shape=vector work_group_size=.* case=" AND
   NOT line MATCHES "op=KVCacheAppend case=" AND NOT line MATCHES "op=MergeAttentionStates case=")
  message(FATAL_ERROR "no verbose line in: ${err}")
endif()
string(REGEX REPLACE "^.* case=" "" json "${line}")
file(MAKE_DIRECTORY ${OUT})
file(WRITE ${OUT}/replay_case.json "${json}")
set(ENV{IFA_VERBOSE} 0)
execute_process(COMMAND ${RUN} ${OUT}/replay_case.json --check RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "PASS")
  message(FATAL_ERROR "replay failed (${rc}): ${out} ${err}")
endif()
message(STATUS "replayed: ${json}")
