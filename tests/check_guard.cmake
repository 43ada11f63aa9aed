# ctest output_guard: the case runner (tools/common/runner.c, under ifa-run, ifa-soak, ifa-bench's check and the
# feature tests) keeps 4 KiB of pattern before and after the output, softmax_lse and the workspace and fails a run
# that changes any of it (bytes_outside). Shown here to fail: the kernels come from a copy of op_kernel/ whose
# vector shape stores each output vector one element further on (IFA_KERNEL_DIR), so the last row's last element
# lands in the guard after the output; the same case passes with the sources as they are.
#   cmake -DRUN=ifa-run -DSRC=op_kernel/ -DCASE=examples/sample_case.json -DDIR=DIR -P check_guard.cmake
file(REMOVE_RECURSE ${DIR})
file(COPY ${SRC}/ DESTINATION ${DIR})
file(READ ${DIR}/ifa_attention_output.clh text)
set(store "IFA_VSTORE(O_T, x, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d);")
string(FIND "${text}" "${store}" at)
if(at LESS 0)
  message(FATAL_ERROR "ifa_attention_output.clh has no line '${store}' to shift: update this probe with the kernel")
endif()
string(REPLACE "${store}" "IFA_VSTORE(O_T, x, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d + 1);"
       text "${text}")
file(WRITE ${DIR}/ifa_attention_output.clh "${text}")
include(${CMAKE_CURRENT_LIST_DIR}/mutant.cmake)
ifa_expect_mutant_caught(${RUN} ${CASE} ${DIR} "bytes_outside=[1-9][0-9]* round_bias=[^ ]* ulp -> FAIL"
  "bytes_outside=0 round_bias=[^ ]* ulp -> PASS" "a store one element past each output vector")
message(STATUS "a store one element past each output vector failed the guard; the sources passed it")
