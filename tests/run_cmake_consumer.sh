#!/usr/bin/env bash
# The installed CMake package, used as another project would use it: installs
# the built library to a temporary prefix, configures and builds
# examples/cmake_consumer against that prefix (find_package(tcgemm), target
# tcgemm::tcgemm), and runs it. Passes when the consumer exits 0 (its GEMMs
# through the C++ API and the C ABI ran and equal the host result) or, where
# no GPU is visible, 3 with tcgemm's "no CUDA device" reason printed (the
# documented answer on such a machine).
# usage: run_cmake_consumer.sh SOURCE_DIR BUILD_DIR CUDA_TOOLKIT_ROOT
set -euo pipefail
src=$1 build=$2 cuda_root=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() {  # runs a step quietly, showing its log if it fails
  local name=$1; shift
  if ! "$@" > "$work/$name.log" 2>&1; then
    cat "$work/$name.log"
    echo "cmake_consumer: $name failed"
    exit 1
  fi
}
step install cmake --install "$build" --prefix "$work/prefix"
# What the README says a plain install puts there: the headers, the library
# and its CMake package; never the Python package's files (installed by the
# package build alone, even from a build configured with TCGEMM_BUILD_PYTHON=ON).
for f in include/tcgemm/tcgemm.h include/tcgemm/tcgemm.hpp; do
  [[ -f $work/prefix/$f ]] || { echo "cmake_consumer: the install lacks $f"; exit 1; }
done
compgen -G "$work/prefix/lib*/libtcgemm.so*" > /dev/null ||
  { echo "cmake_consumer: the install lacks libtcgemm.so"; exit 1; }
compgen -G "$work/prefix/lib*/cmake/tcgemm/tcgemmConfig.cmake" > /dev/null ||
  { echo "cmake_consumer: the install lacks the CMake package"; exit 1; }
# The CLI, where built, with the renderer its `bench --plot` finds from bin/.
if [[ -e $work/prefix/bin/tcgemm && ! -f $work/prefix/share/tcgemm/bench_plot.py ]]; then
  echo "cmake_consumer: the install has bin/tcgemm but not share/tcgemm/bench_plot.py"; exit 1
fi
[[ ! -e $work/prefix/tcgemm ]] ||
  { echo "cmake_consumer: a plain install put the Python package's files in $work/prefix/tcgemm"; exit 1; }
step configure cmake -S "$src/examples/cmake_consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCUDAToolkit_ROOT="$cuda_root" -DCMAKE_BUILD_TYPE=Release
step build cmake --build "$work/build"
set +e
"$work/build/tcgemm_consumer" | tee "$work/run.log"
rc=${PIPESTATUS[0]}
set -e
if [[ $rc -eq 0 ]]; then
  echo "cmake_consumer: ok"
elif [[ $rc -eq 3 ]] && grep -q "no CUDA device" "$work/run.log"; then
  echo "cmake_consumer: ok (no GPU: the consumer printed tcgemm's reason and exited 3, as documented)"
else
  echo "cmake_consumer: the consumer exited $rc"
  exit 1
fi
