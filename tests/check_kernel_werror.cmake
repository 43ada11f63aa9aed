# ctest kernel_werror: IFA_KERNEL_WERROR=1 (which scripts/test sets for the suite, so that every kernel variant
# it builds is checked for compiler warnings) turns a warning in ifa's kernels into a failed build that names it,
# and without it the same warning builds and runs. The kernels come from a copy of op_kernel/ whose merge kernel
# carries a #warning (IFA_KERNEL_DIR): a source no other test builds, so no kernel cache answers for it.
#   cmake -DRUN=ifa-run -DSRC=op_kernel/ -DCASE=examples/merge_case.json -DDIR=DIR -P check_kernel_werror.cmake
file(REMOVE_RECURSE ${DIR})
file(COPY ${SRC}/ DESTINATION ${DIR})
file(READ ${DIR}/ifa_merge.cl text)
string(RANDOM LENGTH 12 probe) # a new source each run: PoCL's cache never holds it
file(WRITE ${DIR}/ifa_merge.cl "#warning ifa_werror_probe_${probe}\n${text}")
set(ENV{IFA_KERNEL_DIR} ${DIR})
set(ENV{IFA_KERNEL_WERROR} 1)
execute_process(COMMAND ${RUN} ${CASE} --check RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "-Werror" OR NOT "${out}${err}" MATCHES "ifa_werror_probe_${probe}")
  message(FATAL_ERROR "with IFA_KERNEL_WERROR=1 the warning should fail the build and be named (exit ${rc}):\n${out}${err}")
endif()
set(ENV{IFA_KERNEL_WERROR} 0)
execute_process(COMMAND ${RUN} ${CASE} --check RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "with IFA_KERNEL_WERROR=0 a warning must not fail the build (exit ${rc}):\n${out}${err}")
endif()
message(STATUS "IFA_KERNEL_WERROR=1 failed the warned build and named the warning; =0 built and ran it")
