# ctest output_guard: the case runner (tools/common/runner.c, under ifa-run, ifa-soak, ifa-bench's check and the
# feature tests) keeps 4 KiB of pattern before and after the output, softmax_lse and the workspace and fails a run
# that changes any of it (bytes_outside). Shown here to fail: the kernels come from a copy of op_kernel/ whose
# vector shape stores each output vector one element further on (IFA_KERNEL_DIR), so the last row's last element
# lands in the guard after the output; the same case passes with the sources as they are.
#   cmake -DRUN=ifa-run -DSRC=op_kernel/ -DCASE=examples/sample_case.json -DDIR=DIR -P check_guard.cmake
file(REMOVE_RECURSE ${DIR})
file(COPY ${SRC}/ DESTINATION ${DIR})
file(READ ${DIR}/ifa_all_vector.cl text)
set(store "IFA_VSTORE(O_T, x, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d);")
string(FIND "${text}" "${store}" at)
if(at LESS 0)
  message(FATAL_ERROR "ifa_all_vector.cl has no line '${store}' to shift: update this probe with the kernel")
endif()
string(REPLACE "${store}" "IFA_VSTORE(O_T, x, o, obase + (ulong)g * o_hstride + (ulong)t * o_tstride + (ulong)d + 1);"
       text "${text}")
file(WRITE ${DIR}/ifa_all_vector.cl "${text}")
set(ENV{IFA_KERNEL_DIR} ${DIR})
execute_process(COMMAND ${RUN} ${CASE} --mode test RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT out MATCHES "bytes_outside=[1-9][0-9]* -> FAIL")
  message(FATAL_ERROR "a store past the output should fail with bytes_outside > 0 (exit ${rc}):\n${out}${err}")
endif()
unset(ENV{IFA_KERNEL_DIR})
execute_process(COMMAND ${RUN} ${CASE} --mode test RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "bytes_outside=0 -> PASS")
  message(FATAL_ERROR "the sources as they are should pass with bytes_outside=0 (exit ${rc}):\n${out}${err}")
endif()
message(STATUS "a store one element past each output vector failed the guard; the sources passed it")
