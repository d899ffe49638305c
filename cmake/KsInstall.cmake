# cmake --install: kbench and check_cc, the Python tools, the headers, and the three libraries with exported
# targets ks::common, ks::gemm, ks::reduce, so another project can find_package(cuda_kernel_suite).
include(CMakePackageConfigHelpers)
set(ks_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/cuda_kernel_suite")

install(TARGETS kbench check_cc RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES bench/compare.py bench/summarize.py bench/spread.py bench/kresults.py DESTINATION "${CMAKE_INSTALL_DATADIR}/cuda_kernel_suite")
foreach(dir common gemm reduce)
  install(DIRECTORY "${dir}/" DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/cuda_kernel_suite/${dir}"
          FILES_MATCHING PATTERN "*.hpp" PATTERN "[0-9][0-9]_*" EXCLUDE)
endforeach()
install(FILES "${PROJECT_BINARY_DIR}/generated/common/build_info.hpp"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/cuda_kernel_suite/common")

# The libraries and their exported targets need their public dependencies installed on the system: a
# dependency that was downloaded at configure time (KS_FETCH_MISSING) is not part of any export.
if(TARGET eigen)
  message(STATUS "install: the libraries and their CMake package are left out (Eigen3 was downloaded; install "
                 "libeigen3-dev to install them)")
  return()
endif()
install(TARGETS ks_common ks_gemm ks_reduce EXPORT ks_targets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/cuda_kernel_suite")
install(EXPORT ks_targets NAMESPACE ks:: FILE cuda_kernel_suiteTargets.cmake DESTINATION "${ks_cmake_dir}")
configure_package_config_file(cmake/cuda_kernel_suiteConfig.cmake.in
                              "${PROJECT_BINARY_DIR}/cuda_kernel_suiteConfig.cmake" INSTALL_DESTINATION "${ks_cmake_dir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/cuda_kernel_suiteConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cuda_kernel_suiteConfig.cmake"
              "${PROJECT_BINARY_DIR}/cuda_kernel_suiteConfigVersion.cmake" DESTINATION "${ks_cmake_dir}")
