# For the ctests that show a check catching a planted bug (check_guard.cmake, check_rounding.cmake): runs ifa-run on
# CASE with the kernels of DIR (a changed copy of op_kernel/: IFA_KERNEL_DIR) and expects a failure matching
# fail_re, then with the sources as they are and expects a pass matching pass_re.
function(ifa_expect_mutant_caught run case dir fail_re pass_re what)
  set(ENV{IFA_KERNEL_DIR} ${dir})
  execute_process(COMMAND ${run} ${case} --mode test RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 OR NOT out MATCHES "${fail_re}")
    message(FATAL_ERROR "${what} should fail the check (exit ${rc}, want output matching ${fail_re}):\n${out}${err}")
  endif()
  unset(ENV{IFA_KERNEL_DIR})
  execute_process(COMMAND ${run} ${case} --mode test RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "${pass_re}")
    message(FATAL_ERROR "the sources as they are should pass (exit ${rc}, want output matching ${pass_re}):\n${out}${err}")
  endif()
endfunction()
