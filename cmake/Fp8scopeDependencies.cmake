# Dependencies come from Debian packages (see scripts/install-deps.sh).
find_package(Threads REQUIRED)
# fmt: its headers, and its compiled part in fp8scope_fmt (common/src/fmt_compiled.cpp), so no program carries a
# libfmt.so dependency onto GPU machines.
find_package(fmt REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 REQUIRED)
# zlib writes gzipped exports (`fp8scope export --perfetto OUT.json.gz`), as Kineto and HTA read them.
find_package(ZLIB REQUIRED)
if(FP8SCOPE_BUILD_TESTS)
    find_package(Catch2 2 REQUIRED)
    include(Catch)
endif()

# SQLite is linked statically everywhere: the injected library must hide its symbols so that a Python `sqlite3`
# module in the same process keeps its own copy, and one static copy keeps the CLI on the same SQLite version.
# Debian's libsqlite3.a is built position-independent.
find_path(SQLITE3_INCLUDE_DIR sqlite3.h REQUIRED)
find_library(SQLITE3_STATIC_LIBRARY NAMES libsqlite3.a REQUIRED)
add_library(fp8scope_sqlite3 INTERFACE)
target_include_directories(fp8scope_sqlite3 SYSTEM INTERFACE ${SQLITE3_INCLUDE_DIR})
target_link_libraries(fp8scope_sqlite3 INTERFACE ${SQLITE3_STATIC_LIBRARY} Threads::Threads ${CMAKE_DL_LIBS} m)
