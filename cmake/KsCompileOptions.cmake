# Compile options shared by every target of the project: ks_target_options(<target>).

# What the binary embeds, as "sass:75,86,90;ptx:90" for check_cc and the result context. CMake's plain
# number means SASS and PTX for that architecture, NN-real SASS only, NN-virtual PTX only.
set(ks_sass "")
set(ks_ptx "")
foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
  if(arch MATCHES "^([0-9]+[af]?)-real$")
    list(APPEND ks_sass ${CMAKE_MATCH_1})
  elseif(arch MATCHES "^([0-9]+[af]?)-virtual$")
    list(APPEND ks_ptx ${CMAKE_MATCH_1})
  elseif(arch MATCHES "^([0-9]+[af]?)$")
    list(APPEND ks_sass ${CMAKE_MATCH_1})
    list(APPEND ks_ptx ${CMAKE_MATCH_1})
  else()
    set(ks_unknown_arch_spec ${arch})  # native, all, all-major: resolved by CMake, not listed here
  endif()
endforeach()
if(DEFINED ks_unknown_arch_spec)
  set(KS_CUDA_ARCHS_RESOLVED "unknown:${CMAKE_CUDA_ARCHITECTURES}")
else()
  string(REPLACE ";" "," ks_sass "${ks_sass}")
  string(REPLACE ";" "," ks_ptx "${ks_ptx}")
  set(KS_CUDA_ARCHS_RESOLVED "sass:${ks_sass};ptx:${ks_ptx}")
endif()

# Device code unoptimised (NVVM at -O0, as PTX only where the architectures say -virtual): for builds whose device code
# never runs, such as the sanitized host tests on a machine without a GPU (tests/sanitize_host.sh), where it takes
# gemm/07_ozaki/ozaki.cu from 37 to 15 s.
option(KS_DEVICE_CODE_O0 "Compile device code unoptimised (for builds whose kernels never run)" OFF)

function(ks_target_options target)
  if(KS_DEVICE_CODE_O0)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xcicc=-O0>)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo --expt-relaxed-constexpr>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CONFIG:Debug>>:-G>
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
  if(KS_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()
