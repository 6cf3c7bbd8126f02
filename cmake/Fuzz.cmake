# MXLITE_BUILD_FUZZ=ON builds the libFuzzer targets in tests/fuzz/ (clang only). Every target gets
# libFuzzer's coverage instrumentation, so the fuzzer steers by the library's branches, and
# AddressSanitizer plus UndefinedBehaviorSanitizer, so a bad access or overflow is a crash it reports.
if(MXLITE_BUILD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MXLITE_BUILD_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ (compiler here: ${CMAKE_CXX_COMPILER_ID})")
  endif()
  if(MXLITE_SANITIZE)
    message(FATAL_ERROR "MXLITE_BUILD_FUZZ brings its own sanitizers; leave MXLITE_SANITIZE empty")
  endif()
  set(_mxlite_fuzz_flags -fsanitize=fuzzer-no-link,address,undefined
      -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g)
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${_mxlite_fuzz_flags}>")
  add_link_options(-fsanitize=address,undefined)
endif()
