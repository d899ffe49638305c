# The HIP build (the `hip` preset, -DKS_HIP=ON): the same sources for AMD GPUs, compiled by clang's AMDGPU back
# end with the HIP runtime, rocPRIM and the ROCm device libraries (Debian: hipcc, libamdhip64-dev,
# rocm-device-libs, librocprim-dev). Every .cu file is HIP source here (common/gpu_runtime.hpp maps the CUDA
# runtime names onto HIP's); .cpp files are plain C++ against the HIP runtime's headers.
#
# What it builds: the harness (ks::common, without cuBLAS), the whole reduction ladder with rocPRIM as its anchor,
# and the GoogleTest programs of both (GPU tests skip where no GPU is visible). What it leaves out, and why, is in
# the README ("AMD GPUs").

# Targets: wave64 gfx9 GPUs (gfx906: MI50/MI60 and Hygon's DCUs of that class; gfx90a: MI200). The warp-level
# code takes its lane count at compile time (ks::kWarpSize), one for the whole build, so a target list must not
# mix wavefront widths: the wave32-first targets (gfx10, gfx11) are refused.
set(KS_HIP_TARGETS "gfx906;gfx90a" CACHE STRING "AMD GPU targets of the HIP build")
foreach(target IN LISTS KS_HIP_TARGETS)
  if(NOT target MATCHES "^gfx9[0-9a-f]+(:[a-z+-:]+)?$")
    message(FATAL_ERROR "KS_HIP_TARGETS: ${target} is not a wave64 gfx9 target (gfx906, gfx908, gfx90a, ...); "
                        "the HIP build compiles for one wavefront width, 64 lanes")
  endif()
endforeach()
set(KS_HIP_WAVEFRONT 64)
string(REPLACE ";" "," KS_CUDA_ARCHS_RESOLVED "hip:${KS_HIP_TARGETS}")  # what build_info.hpp records

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "The HIP build needs clang with the AMDGPU back end (Debian 12: clang++-15, the compiler "
                      "its HIP packages are built with; ROCm: /opt/rocm/llvm/bin/clang++); got "
                      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER}")
endif()
find_package(hip CONFIG REQUIRED)      # hip::host: the runtime library and __HIP_PLATFORM_AMD__
find_package(rocprim CONFIG REQUIRED)  # roc::rocprim: the reduction anchor
find_package(OpenMP COMPONENTS CXX)
# The ROCm device libraries (ocml and friends, as bitcode): Debian puts them beside its other libraries.
find_path(KS_HIP_DEVICE_LIBS ocml.bc
          PATHS /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /usr/lib/amdgcn/bitcode /opt/rocm/amdgcn/bitcode
                "${ROCM_PATH}/amdgcn/bitcode" NO_DEFAULT_PATH)
if(NOT KS_HIP_DEVICE_LIBS)
  message(FATAL_ERROR "ROCm's device libraries (ocml.bc) were not found: install rocm-device-libs")
endif()
get_filename_component(KS_HIP_ROCM_PATH "${hip_INCLUDE_DIR}/.." ABSOLUTE)

# HIP sources compile as C++17 (with C++20's designated initializers, which clang takes there): clang 15, the
# compiler of Debian's HIP packages, crashes in its device pass on a std::map of structs holding std::function
# under -std=c++20 (the variant registries). Host files stay C++20; the two share libstdc++'s ABI.
set(KS_HIP_DEVICE_FLAGS -x hip "--rocm-path=${KS_HIP_ROCM_PATH}" "--hip-device-lib-path=${KS_HIP_DEVICE_LIBS}"
    -std=c++17 -Wno-c++20-designator -mllvm -amdgpu-early-inline-all=true -mllvm -amdgpu-function-calls=false)
foreach(target IN LISTS KS_HIP_TARGETS)
  list(APPEND KS_HIP_DEVICE_FLAGS "--offload-arch=${target}")
endforeach()

# ks_hip_sources(<target>): the target's .cu files compile as HIP for KS_HIP_TARGETS; all its files see KS_HIP.
function(ks_hip_sources target)
  get_target_property(sources ${target} SOURCES)
  foreach(src IN LISTS sources)
    if(src MATCHES "\\.cu$")
      set_source_files_properties(${src} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX
                                  COMPILE_OPTIONS "${KS_HIP_DEVICE_FLAGS}")
    endif()
  endforeach()
  target_compile_definitions(${target} PUBLIC KS_HIP KS_HIP_WAVEFRONT=${KS_HIP_WAVEFRONT})
  target_link_libraries(${target} PUBLIC hip::host)
endfunction()
