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

# ks_unity_host(<target>): a library's C++ sources compiled as one translation unit (CMake's unity build) where
# KS_UNITY_HOST is on (the default). Most of a C++ file's compile time here is the headers every file of a library
# includes (the STL, CLI11, the CUDA runtime's, the suite's own), parsed again for each file: kbench's library files
# took 83 core-seconds alone and 35 as one unit with the sanitized build's flags (GCC -O0 with AddressSanitizer), 86
# and 33 with the release flags (-O3), 59 and 26 under the HIP build's clang; the five libraries' files 253 -> 113,
# 194 -> 88 and 130 -> 75 (docs/harness-notes.md). The libraries' .cu files stay one unit each (CMake from 3.31 would put them in the batch
# too): their device code is most of the build, and they compile side by side. Names with internal linkage must
# differ between a library's files, and a class of external linkage may not hold a type of internal linkage (GCC's
# -Wsubobject-linkage: a file inside a unity source counts as a header); the compiler says where.
# -DKS_UNITY_HOST=OFF compiles every file alone, which also shows that each one includes what it uses.
option(KS_UNITY_HOST "Compile each library's C++ sources as one translation unit (faster builds)" ON)
function(ks_unity_host target)
  if(NOT KS_UNITY_HOST)
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  foreach(source IN LISTS sources)
    if(source MATCHES "\\.cu$")
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 0)
endfunction()
