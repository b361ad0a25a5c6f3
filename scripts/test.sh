#!/usr/bin/env bash
# Builds tcgemm and runs every test that can run here: host tests (no GPU
# needed), GPU tests (skipped with a message when no Hopper GPU is visible),
# the SASS check (skipped without cuobjdump), the API fuzz test (skipped
# without clang and libFuzzer), then the Python tests: the one-file submission
# generator runs anywhere, the tensor-parallel schedules wherever torch is
# (CPU processes over gloo); where a CUDA build of torch and scikit-build-core
# are installed (a GPU or not), the `tcgemm` package is built against that
# torch and installed (offline: pip install --no-build-isolation --no-deps
# --no-index .) so that the torch tests run too: without a GPU, those of its
# operators on meta and CPU tensors (python/tests/test_torch_cpu.py); with
# one, all. Elsewhere they skip, saying why. The package is built in the same
# build dir as the tests (its CMake options are the same but for
# TCGEMM_BUILD_PYTHON, which the first build already turns on), so the kernels
# compile once, not twice.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
source scripts/env.sh
package=OFF
if python3 -c "import sys, torch, scikit_build_core; sys.exit(0 if torch.version.cuda else 1)" 2>/dev/null; then
  package=ON
fi
# bench.sh turns the tests off in the same build dir.
options=(-DTCGEMM_BUILD_TESTS=ON -DTCGEMM_BUILD_TOOLS=ON -DTCGEMM_BUILD_PYTHON=$package)
configure_and_build "${options[@]}"
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure || status=$?
# ctest names the tests it skipped but not why: print each one's reason.
awk '/^[0-9]+\/[0-9]+ Test: / { name = $3; shown = 0 }
     !shown && name != "" && /^(SKIP: |TCGEMM_GPU_TESTS_SKIPPED: )/ { print "skipped " name ": " $0; shown = 1 }' \
  "$BUILD_DIR/Testing/Temporary/LastTest.log" 2>/dev/null || true
[[ $status -eq 0 ]] || exit $status

if [[ $package == ON ]]; then
  echo "test: installing the tcgemm package against torch $(python3 -c 'import torch; print(torch.__version__)')"
  # scikit-build-core reconfigures $BUILD_DIR with pyproject.toml's options;
  # the same ones as above keep the tests and the tool in it. It also leaves
  # entries of its own in the cache (the wheel's staging folder as the install
  # prefix, its module and package search paths): what was there before is
  # put back after the install, so later configures and `cmake --install`
  # see the build as they did (CMake's defaults, where an install that
  # stopped half-way left its entries there).
  cache="$BUILD_DIR/CMakeCache.txt"
  restore=(-U 'SKBUILD*' -U CMAKE_FIND_ROOT_PATH_MODE_PACKAGE)
  for var in CMAKE_INSTALL_PREFIX CMAKE_PREFIX_PATH CMAKE_MODULE_PATH; do
    if grep -q "^$var:" "$cache" && ! grep -q "^SKBUILD:" "$cache"; then
      restore+=("-D$var=$(sed -n "s/^$var:[A-Z]*=//p" "$cache")")
    else restore+=(-U "$var"); fi
  done
  install=(python3 -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps --no-index
           "--config-settings=build-dir=$(cd "$BUILD_DIR" && pwd)")
  for option in "${options[@]}"; do install+=("--config-settings=cmake.define.${option#-D}"); done
  install+=(.)
  pip_status=0
  "${install[@]}" > "$BUILD_DIR/python_install.log" 2>&1 || pip_status=$?
  # A distribution's own python3 refuses pip installs unless told (PEP 668), as in setup.sh.
  if [[ $pip_status -ne 0 ]] && grep -q externally-managed-environment "$BUILD_DIR/python_install.log"; then
    pip_status=0
    "${install[@]}" --break-system-packages > "$BUILD_DIR/python_install.log" 2>&1 || pip_status=$?
  fi
  cmake -S . -B "$BUILD_DIR" "${restore[@]}" >> "$BUILD_DIR/python_install.log" 2>&1 || pip_status=$?
  if [[ $pip_status -ne 0 ]]; then
    tail -30 "$BUILD_DIR/python_install.log"
    echo "test: the tcgemm package did not build (log: $BUILD_DIR/python_install.log)" >&2
    exit 1
  fi
fi
python3 -m pytest -p no:cacheprovider -q -rs python/tests || status=$?
# 5: pytest collected nothing (every module skipped), which is not a failure here.
[[ $status -eq 0 || $status -eq 5 ]] || exit $status
