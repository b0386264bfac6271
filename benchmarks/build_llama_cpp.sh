#!/usr/bin/env bash
# Build llama.cpp's own benchmark tools (llama-batched-bench, llama-bench, llama-server) from the very sources the
# installed llama-cpp-python vendors, so bench_llamacpp_vs_hf.py compares like with like.
#   bash benchmarks/build_llama_cpp.sh [OUT_DIR]      (default build/llama.cpp; about 3 min on 2 cores)
# Needs cmake and a C++ compiler; downloads the llama-cpp-python sdist from PyPI once.
set -euo pipefail
out=${1:-build/llama.cpp}
version=$(python -c "import llama_cpp; print(llama_cpp.__version__)")
src="$out/src"
mkdir -p "$src"
if [ ! -d "$src/llama_cpp_python-$version" ]; then
  echo "fetching the llama-cpp-python $version sources from PyPI ..."
  python -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$version" -d "$src"
  tar -xzf "$src/llama_cpp_python-$version.tar.gz" -C "$src"
fi
echo "building llama-batched-bench, llama-bench and llama-server (GGML_NATIVE, Release) in $out ..."
cmake -S "$src/llama_cpp_python-$version/vendor/llama.cpp" -B "$out" -DCMAKE_BUILD_TYPE=Release \
  -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_SERVER=ON > "$out/cmake.log"
cmake --build "$out" -j "$(nproc)" --target llama-batched-bench llama-bench llama-server > "$out/build.log"
echo "built: $out/bin/llama-batched-bench $out/bin/llama-bench $out/bin/llama-server"
