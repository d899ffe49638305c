# Every dependency is found with find_package first. When one is missing and KS_FETCH_MISSING is on, it is
# downloaded at a pinned tag; when it is off (CI, air-gapped machines), configuration stops with the name of
# the package to install.
include(FetchContent)

# 13.0: the toolkit the suite is built and tested with (cuBLAS 13's FP64-emulation API in gemm/00_cublas.cpp).
if(NOT KS_HIP)  # the HIP build finds its runtime in cmake/KsHip.cmake
  find_package(CUDAToolkit 13.0 REQUIRED)  # CUDA::cudart, CUDA::cublas; CUB ships with the toolkit
endif()
find_package(OpenMP COMPONENTS CXX)      # optional: threads the Eigen reference and host reductions

function(ks_require name debian_pkg)
  cmake_parse_arguments(ARG "" "VERSION;GIT_REPOSITORY;GIT_TAG;TARGET" "FETCH_CACHE_ARGS" ${ARGN})
  find_package(${name} ${ARG_VERSION} QUIET)
  if(${name}_FOUND)
    message(STATUS "${name}: found ${${name}_VERSION}")
    return()
  endif()
  if(NOT KS_FETCH_MISSING)
    message(FATAL_ERROR "${name} ${ARG_VERSION} was not found. Install it (Debian/Ubuntu: "
                        "sudo apt-get install ${debian_pkg}), or configure with -DKS_FETCH_MISSING=ON "
                        "to download ${ARG_GIT_TAG}.")
  endif()
  message(STATUS "${name}: not found; downloading ${ARG_GIT_REPOSITORY} @ ${ARG_GIT_TAG} "
                 "(install ${debian_pkg} to avoid this)")
  foreach(kv IN LISTS ARG_FETCH_CACHE_ARGS)
    string(REPLACE "=" ";" kv "${kv}")
    list(GET kv 0 k)
    list(GET kv 1 v)
    set(${k} ${v} CACHE INTERNAL "")
  endforeach()
  FetchContent_Declare(${name} GIT_REPOSITORY ${ARG_GIT_REPOSITORY} GIT_TAG ${ARG_GIT_TAG}
                       GIT_SHALLOW TRUE)
  FetchContent_MakeAvailable(${name})
endfunction()

ks_require(Eigen3 libeigen3-dev VERSION 3.4
           GIT_REPOSITORY https://gitlab.com/libeigen/eigen.git GIT_TAG 3.4.0
           FETCH_CACHE_ARGS EIGEN_BUILD_DOC=OFF BUILD_TESTING=OFF EIGEN_BUILD_PKGCONFIG=OFF)
ks_require(CLI11 libcli11-dev VERSION 2.1
           GIT_REPOSITORY https://github.com/CLIUtils/CLI11.git GIT_TAG v2.4.2
           FETCH_CACHE_ARGS CLI11_BUILD_TESTS=OFF CLI11_BUILD_EXAMPLES=OFF CLI11_BUILD_DOCS=OFF)
ks_require(benchmark libbenchmark-dev
           GIT_REPOSITORY https://github.com/google/benchmark.git GIT_TAG v1.8.5
           FETCH_CACHE_ARGS BENCHMARK_ENABLE_TESTING=OFF BENCHMARK_ENABLE_GTEST_TESTS=OFF)
if(KS_BUILD_TESTS)
  ks_require(GTest libgtest-dev
             GIT_REPOSITORY https://github.com/google/googletest.git GIT_TAG v1.14.0
             FETCH_CACHE_ARGS INSTALL_GTEST=OFF BUILD_GMOCK=OFF)
endif()

# RE2 (libre2-dev): every pattern from the user and every match over a tool's output (bench/pattern.hpp), in time
# linear in the text. Debian's package has no CMake config: its header and library are looked up directly (where
# CMAKE_PREFIX_PATH points, too).
find_package(re2 CONFIG QUIET)
if(NOT TARGET re2::re2)
  find_path(KS_RE2_INCLUDE_DIR re2/re2.h)
  find_library(KS_RE2_LIBRARY re2)
  if(KS_RE2_INCLUDE_DIR AND KS_RE2_LIBRARY)
    add_library(re2::re2 UNKNOWN IMPORTED)
    set_target_properties(re2::re2 PROPERTIES IMPORTED_LOCATION "${KS_RE2_LIBRARY}"
                                              INTERFACE_INCLUDE_DIRECTORIES "${KS_RE2_INCLUDE_DIR}")
    message(STATUS "RE2: found ${KS_RE2_LIBRARY}")
  elseif(KS_FETCH_MISSING)
    message(STATUS "RE2: not found; downloading https://github.com/google/re2.git @ 2022-06-01 "
                   "(install libre2-dev to avoid this)")
    set(RE2_BUILD_TESTING OFF CACHE INTERNAL "")
    FetchContent_Declare(re2 GIT_REPOSITORY https://github.com/google/re2.git GIT_TAG 2022-06-01 GIT_SHALLOW TRUE)
    FetchContent_MakeAvailable(re2)
  else()
    message(FATAL_ERROR "RE2 was not found. Install it (Debian/Ubuntu: sudo apt-get install libre2-dev), or "
                        "configure with -DKS_FETCH_MISSING=ON to download 2022-06-01.")
  endif()
endif()

# Namespaced aliases where a fetched build exports plain names.
if(TARGET Eigen3::Eigen)
elseif(TARGET eigen)
  add_library(Eigen3::Eigen ALIAS eigen)
endif()
if(NOT TARGET GTest::gtest_main AND TARGET gtest_main)
  add_library(GTest::gtest_main ALIAS gtest_main)
  add_library(GTest::gtest ALIAS gtest)
endif()
