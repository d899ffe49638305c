# The Python interpreter for the suite's Python tools (kbench compare, summarize.py) and their tests: the first
# of the one CMake finds and the system's /usr/bin/python3 that can import matplotlib (Debian's
# python3-matplotlib installs for the latter, which a python3 earlier on PATH, such as pyenv's, does not see);
# otherwise the one CMake finds. KS_PYTHON holds its path ("" when there is none); KS_HAVE_MATPLOTLIB says
# whether plots can be drawn.
find_package(Python3 COMPONENTS Interpreter)
set(KS_PYTHON "")
set(KS_HAVE_MATPLOTLIB FALSE)
set(ks_candidates "")
if(Python3_Interpreter_FOUND)
  list(APPEND ks_candidates "${Python3_EXECUTABLE}")
endif()
if(EXISTS /usr/bin/python3)
  list(APPEND ks_candidates /usr/bin/python3)
endif()
foreach(py IN LISTS ks_candidates)
  execute_process(COMMAND "${py}" -c "import matplotlib" RESULT_VARIABLE ks_rc OUTPUT_QUIET ERROR_QUIET)
  if(ks_rc EQUAL 0)
    set(KS_PYTHON "${py}")
    set(KS_HAVE_MATPLOTLIB TRUE)
    break()
  endif()
endforeach()
if(NOT KS_PYTHON AND ks_candidates)
  list(GET ks_candidates 0 KS_PYTHON)
endif()
message(STATUS "Python for the tools: ${KS_PYTHON} (matplotlib: ${KS_HAVE_MATPLOTLIB})")
