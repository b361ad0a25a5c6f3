"""One-file submission generator: tcgemm as a single Python file.

    python -m tcgemm.make_submission OUT.py          (installed package)
    python3 scripts/make_submission.py OUT.py        (from a checkout; no torch needed)

writes a self-contained file that defines `custom_kernel(data)` for the
matmul_v2 leaderboard: the library's own sources, amalgamated into one CUDA
translation unit, and a small binding, compiled on first import through
torch.utils.cpp_extension.load_inline. The kernel is the library's: the same
dispatch, the same sm90 kernel, the same cuBLAS fallback.

The sources are the ones CMakeLists.txt builds into libtcgemm, minus the C ABI,
the peak-measurement kernel, other architectures' kernels (src/smNN/*.cu)
and, by default, the bf16 kernels, which matmul_v2 never calls and which would
double the compile time. The output depends only
on those sources: generating twice gives identical bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path

if __package__:
    from ._amalgamate import Amalgamator, AmalgamationError, unresolved_project_includes
else:  # loaded as a plain file (scripts/make_submission.py, CI tests): no torch, no package
    from _amalgamate import Amalgamator, AmalgamationError, unresolved_project_includes

# Flags for the CUDA translation unit, as CMakeLists.txt builds the library
# (Release: -O3; NDEBUG is defined in the source itself).
CUDA_FLAGS = ["-gencode=arch=compute_90a,code=sm_90a", "-O3", "--expt-relaxed-constexpr", "-std=c++17",
              "-Xcompiler=-fvisibility=hidden"]

# Library sources that a submission does not need.
_EXCLUDED = {
    "src/api/c_api.cpp",        # the C ABI: Python calls the C++ API
    "src/sm90/sm90_absent.cpp",  # stand-ins for builds without sm_90a
    "src/sm90/sm90_peak.cu",    # the tensor-core ceiling kernel (benchmarks only)
}
# The per-dtype kernel translation units, and what replaces one left out.
_DTYPE_UNITS = {"f16": "src/sm90/sm90_gemm_f16.cu", "bf16": "src/sm90/sm90_gemm_bf16.cu"}
_DTYPE_STUB = """\
// {dtype} kernels left out of this file (make_submission --dtypes f16,bf16 adds them).
namespace tcgemm::sm90 {{
std::string run_{dtype}(const GemmArgs&, const Config&, int*) {{
  return "this single-file build has no {dtype} kernels (generate it with --dtypes f16,bf16)";
}}
}}  // namespace tcgemm::sm90
"""
_BINDING = "python/csrc/submission_binding.cpp"
_INCLUDE_DIRS = ("include", "src", "python/csrc")
_TEMPLATE = Path(__file__).resolve().parent / "_submission_template.py"


@dataclass(frozen=True)
class LibrarySources:
    """What CMakeLists.txt says about the library: its version and sources."""

    root: Path
    version: str
    sources: tuple[str, ...]  # every .cpp/.cu of the tcgemm target, in CMake order, sm90 ones included


def find_root(explicit: str | None = None) -> Path:
    """The tree holding CMakeLists.txt, src/ and include/: `explicit`, the
    checkout this file lives in, or the copy installed with the package."""
    here = Path(__file__).resolve().parent
    candidates = [Path(explicit)] if explicit else [here.parent.parent, here / "_sources"]
    for root in candidates:
        if (root / "CMakeLists.txt").is_file() and (root / "src" / "api").is_dir() and (root / _BINDING).is_file():
            return root.resolve()
    raise AmalgamationError("cannot find the tcgemm sources (CMakeLists.txt, src/, python/csrc/) in " +
                            ", ".join(str(c) for c in candidates) + "; pass --root")


def _cmake_block(text: str, command: str) -> list[str]:
    # `command(tcgemm ...)` blocks: CMake arguments are whitespace-separated and
    # these lists hold plain paths, so no CMake parser is needed.
    blocks = re.findall(rf"^\s*{command}\(\s*tcgemm\b(.*?)\)", text, flags=re.S | re.M)
    return [tok for block in blocks for tok in block.split() if re.fullmatch(r"src/\S+\.(cpp|cu)", tok)]


def read_library_sources(root: Path) -> LibrarySources:
    """Parses CMakeLists.txt for the project version and the library's sources."""
    text = (root / "CMakeLists.txt").read_text(encoding="utf-8")
    version = re.search(r"project\(\s*tcgemm\s+VERSION\s+([0-9.]+)", text)
    sources = _cmake_block(text, "add_library") + _cmake_block(text, "target_sources")
    if version is None or not sources:
        raise AmalgamationError(f"cannot read the tcgemm target's version and sources from {root / 'CMakeLists.txt'}")
    return LibrarySources(root=root, version=version.group(1), sources=tuple(dict.fromkeys(sources)))


def _other_arch(source: str) -> bool:
    # Kernel translation units of other architectures' families (src/sm100/*.cu)
    # cannot compile for sm_90a; their host code (configuration, can_implement)
    # and their stand-ins for a build without them (smNN_absent.cpp) stay, as
    # the dispatcher refers to both.
    arch = re.match(r"src/sm(\d+)/", source)
    return arch is not None and arch.group(1) != "90" and source.endswith(".cu")


def cuda_source(lib: LibrarySources, dtypes: tuple[str, ...]) -> str:
    """The library as one CUDA translation unit, with the dtypes' kernels."""
    tu = Amalgamator(lib.root, _INCLUDE_DIRS)
    # What CMakeLists.txt passes as -D for the library (and Release's NDEBUG).
    tu.add_text("\n".join([
        "// tcgemm " + lib.version + ": the library's sources for sm_90a in one translation unit.",
        "#ifndef NDEBUG",
        "#define NDEBUG",
        "#endif",
        f'#define TCGEMM_VERSION "{lib.version}"',
        '#define TCGEMM_ARCHS "sm_90a"',
        "#define TCGEMM_HAS_SM90 1",
    ]))
    left_out = [d for d in _DTYPE_UNITS if d not in dtypes]
    for source in lib.sources:
        if source in _EXCLUDED or source in (_DTYPE_UNITS[d] for d in left_out) or _other_arch(source):
            continue
        tu.add_file(source)
    for dtype in left_out:
        tu.add_text('#line 1 "make_submission: stub"')
        tu.add_text(_DTYPE_STUB.format(dtype=dtype))
    return tu.text()


def cpp_source(lib: LibrarySources) -> str:
    """The binding (compiled by the host compiler with torch's headers)."""
    tu = Amalgamator(lib.root, _INCLUDE_DIRS)
    tu.add_file(_BINDING)
    return tu.text()


def _python_literal(text: str) -> str:
    # A raw triple-quoted string reads like the source it holds; repr() is the
    # fallback for the (unexpected) text that a raw string cannot hold.
    if "'''" not in text and not text.endswith("\\"):
        return "r'''" + text + "'''"
    return repr(text)


def render(root: Path | None = None, dtypes: tuple[str, ...] = ("f16",), leaderboard: str = "matmul_v2",
           gpu: str = "H100") -> str:
    """The text of the submission file."""
    for dtype in dtypes:
        if dtype not in _DTYPE_UNITS:
            raise ValueError(f"unknown dtype {dtype!r}: choose from {', '.join(_DTYPE_UNITS)}")
    lib = read_library_sources(find_root(str(root) if root else None))
    cuda, cpp = cuda_source(lib, dtypes), cpp_source(lib)
    for name, text in (("CUDA", cuda), ("C++", cpp)):
        if unresolved := unresolved_project_includes(text):
            raise AmalgamationError(f"{name} source still includes {unresolved}")
    digest = hashlib.sha256((cuda + "\0" + cpp + "\0" + " ".join(CUDA_FLAGS)).encode()).hexdigest()[:16]
    docstring = "\n".join([
        f"{leaderboard} submission: tcgemm {lib.version} (sm_90a wgmma + TMA GEMM, cuBLAS fallback), one file.",
        "",
        "custom_kernel(data) takes (a, b, c), fp16 and row-major, and computes c = a @ b into c",
        "(fp32 accumulation in K order, one rounding: bit-identical to torch's a @ b on these shapes).",
        "The library is compiled on first import (about a minute) with torch.utils.cpp_extension.load_inline.",
        f"Kernels built in: {', '.join(dtypes)}. Generated by `python -m tcgemm.make_submission` from the",
        f"library's sources (content hash {digest}); edit those, not this file.",
    ])
    body = _TEMPLATE.read_text(encoding="utf-8")
    replacements = {
        '"""@DOCSTRING@"""': '"""' + docstring + '\n"""',
        '"@VERSION@"': repr(lib.version),
        '"@CUDA_SOURCE@"': _python_literal(cuda),
        '"@CPP_SOURCE@"': _python_literal(cpp),
        '"@MODULE_NAME@"': repr(f"tcgemm_submission_{digest}"),
        '"@CUDA_FLAGS@"': repr(CUDA_FLAGS),
    }
    for key, value in replacements.items():
        if body.count(key) != 1:
            raise AmalgamationError(f"template {_TEMPLATE.name} must hold {key} exactly once")
        body = body.replace(key, value)
    header = [f"#!POPCORN leaderboard {leaderboard}"] if leaderboard else []
    header += [f"#!POPCORN gpu {gpu}"] if gpu else []
    return "".join(line + "\n" for line in header) + body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tcgemm.make_submission", description=__doc__.split("\n\n")[0])
    parser.add_argument("output", help="the file to write ('-' for standard output)")
    parser.add_argument("--dtypes", default="f16", help="kernels to build in, comma-separated: f16, bf16 (default f16)")
    parser.add_argument("--root", help="the tcgemm source tree (default: this checkout, or the installed copy)")
    parser.add_argument("--leaderboard", default="matmul_v2", help="'#!POPCORN leaderboard' line ('' for none)")
    parser.add_argument("--gpu", default="H100", help="'#!POPCORN gpu' line ('' for none)")
    args = parser.parse_args(argv)
    try:
        text = render(Path(args.root) if args.root else None, tuple(args.dtypes.split(",")), args.leaderboard,
                      args.gpu)
    except (AmalgamationError, ValueError) as error:
        print(f"make_submission: {error}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"make_submission: wrote {args.output} ({len(text)} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
