# Third-party libraries, all from Debian packages (scripts/install-deps.sh).
find_package(Threads REQUIRED)

# OpenBLAS provides CBLAS and LAPACK; LAPACKE is the C interface to LAPACK.
find_path(CBLAS_INCLUDE_DIR cblas.h PATHS /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu /usr/include
          PATH_SUFFIXES openblas-pthread openblas)
find_library(OPENBLAS_LIBRARY NAMES openblas REQUIRED)
find_path(LAPACKE_INCLUDE_DIR lapacke.h REQUIRED)
find_library(LAPACKE_LIBRARY NAMES lapacke REQUIRED)
if(NOT CBLAS_INCLUDE_DIR)
  message(FATAL_ERROR "cblas.h not found: run scripts/install-deps.sh (package libopenblas-dev)")
endif()
add_library(asteria_blas INTERFACE)
target_include_directories(asteria_blas SYSTEM INTERFACE ${CBLAS_INCLUDE_DIR} ${LAPACKE_INCLUDE_DIR})
target_link_libraries(asteria_blas INTERFACE ${LAPACKE_LIBRARY} ${OPENBLAS_LIBRARY})

find_package(Boost 1.74 REQUIRED COMPONENTS program_options)
find_package(nlohmann_json 3.10 REQUIRED)
if(NOT TARGET yaml-cpp)
  find_package(yaml-cpp REQUIRED)
endif()

if(ASTERIA_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(ASTERIA_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
