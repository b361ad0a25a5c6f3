"""One-file submission generator: tcgemm as a single Python file.

    python -m tcgemm.make_submission OUT.py          (installed package)
    python3 scripts/make_submission.py OUT.py        (from a checkout; no torch needed)

writes a self-contained file that defines `custom_kernel(data)` for the
matmul_v2 leaderboard: the library's own sources, amalgamated into one CUDA
translation unit, and a small binding, compiled on first import through
torch.utils.cpp_extension.load_inline. The kernel is the library's: the same
dispatch, the same kernel family, the same cuBLAS fallback.

`--gpu` picks the leaderboard's GPU and with it the kernel family built in:
H100 the sm90 family (sm_90a: wgmma, TMA, persistent), B200 the sm100 family
(sm_100a: tcgen05, tensor memory, 2-SM clusters, Cluster Launch Control).

The sources are the ones CMakeLists.txt builds into libtcgemm for that one
architecture, as a build with -DTCGEMM_CUDA_ARCHS=<arch> has them (the other
family's host code and its stand-ins, not its kernels), minus the C ABI, the
peak-measurement kernel and, by default, the bf16 kernels, which matmul_v2
never calls and which would double the compile time. The output depends only
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

@dataclass(frozen=True)
class Target:
    """A leaderboard GPU and the kernel family a submission for it builds in."""

    arch: str         # CMake's TCGEMM_CUDA_ARCHS entry: "90a"
    family: str       # the source folder and namespace: "sm90"
    description: str  # for the file's docstring

    @property
    def cuda_flags(self) -> list[str]:
        """Flags for the CUDA translation unit, as CMakeLists.txt builds the
        library (Release: -O3; NDEBUG is defined in the source itself). No
        -std: load_inline puts torch's headers in that unit too and adds the
        standard they need (C++20 in recent releases) unless one is given,
        and the library builds as C++17 or C++20 alike."""
        return [f"-gencode=arch=compute_{self.arch},code=sm_{self.arch}", "-O3", "--expt-relaxed-constexpr",
                "-Xcompiler=-fvisibility=hidden"]


TARGETS = {
    "H100": Target("90a", "sm90", "sm_90a wgmma + TMA persistent GEMM"),
    "B200": Target("100a", "sm100", "sm_100a tcgen05 + TMA GEMM, 2-SM clusters, tensor-memory double buffering"),
}
DEFAULT_GPU = "H100"
CUDA_FLAGS = TARGETS[DEFAULT_GPU].cuda_flags  # the H100 file's

# Library sources that no submission needs.
_EXCLUDED = {
    "src/api/c_api.cpp",      # the C ABI: Python calls the C++ API
    "src/sm90/sm90_peak.cu",  # the tensor-core ceiling kernel (benchmarks only)
}
_DTYPES = ("f16", "bf16")
# What replaces a dtype's kernel translation unit left out.
_DTYPE_STUB = """\
// {dtype} kernels left out of this file (make_submission --dtypes f16,bf16 adds them).
namespace tcgemm::{family} {{
std::string run_{dtype}(const GemmArgs&, const Config&, int*) {{
  return "this single-file build has no {dtype} kernels (generate it with --dtypes f16,bf16)";
}}
}}  // namespace tcgemm::{family}
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


def _other_arch(source: str, target: Target = TARGETS[DEFAULT_GPU]) -> bool:
    # Kernel translation units of other families (src/sm100/*.cu for sm_90a)
    # cannot compile for the target; their host code (configuration,
    # can_implement) and their stand-ins for a build without them
    # (smNN_absent.cpp) stay, as the dispatcher refers to both. The target's
    # own stand-ins go: its kernels are built.
    family = re.match(r"src/(sm\d+)/", source)
    if family is None:
        return False
    if family.group(1) == target.family:
        return source.endswith("_absent.cpp")
    return source.endswith(".cu")


def _dtype_unit(target: Target, dtype: str, source: str) -> bool:
    # A dtype's kernels: its entry point (smNN_gemm_<dtype>.cu) and the parts
    # its kernels are spread over (smNN_gemm_<dtype>_part<P>.cu).
    return re.fullmatch(rf"src/{target.family}/{target.family}_gemm_{dtype}(_part\d+)?\.cu", source) is not None


def cuda_source(lib: LibrarySources, dtypes: tuple[str, ...], target: Target = TARGETS[DEFAULT_GPU]) -> str:
    """The library as one CUDA translation unit, with the dtypes' kernels of the target's family."""
    tu = Amalgamator(lib.root, _INCLUDE_DIRS)
    # What CMakeLists.txt passes as -D for the library (and Release's NDEBUG).
    tu.add_text("\n".join([
        f"// tcgemm {lib.version}: the library's sources for sm_{target.arch} in one translation unit.",
        "#ifndef NDEBUG",
        "#define NDEBUG",
        "#endif",
        f'#define TCGEMM_VERSION "{lib.version}"',
        f'#define TCGEMM_ARCHS "sm_{target.arch}"',
        f"#define TCGEMM_HAS_{target.family.upper()} 1",
        "// The leaderboard's GEMMs have no bias or activation: the plain kernels alone compile faster.",
        "#define TCGEMM_NO_FUSED_EPILOGUE 1",
    ]))
    left_out = [d for d in _DTYPES if d not in dtypes]
    for source in lib.sources:
        if source in _EXCLUDED or any(_dtype_unit(target, d, source) for d in left_out) or _other_arch(source, target):
            continue
        tu.add_file(source)
    for dtype in (d for d in _DTYPES if d not in dtypes):
        tu.add_text('#line 1 "make_submission: stub"')
        tu.add_text(_DTYPE_STUB.format(dtype=dtype, family=target.family))
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
           gpu: str = DEFAULT_GPU) -> str:
    """The text of the submission file for `gpu` (one of TARGETS; "" writes
    no '#!POPCORN gpu' line and builds the default GPU's family)."""
    for dtype in dtypes:
        if dtype not in _DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}: choose from {', '.join(_DTYPES)}")
    if gpu and gpu not in TARGETS:
        raise ValueError(f"no kernel family for GPU {gpu!r}: choose from {', '.join(TARGETS)}")
    if leaderboard == "matmul_v2" and "f16" not in dtypes:
        raise ValueError("matmul_v2's inputs are float16: --dtypes must include f16 (a file without its kernels "
                         "would not run tcgemm's kernels on them)")
    target = TARGETS[gpu or DEFAULT_GPU]
    lib = read_library_sources(find_root(str(root) if root else None))
    cuda, cpp = cuda_source(lib, dtypes, target), cpp_source(lib)
    for name, text in (("CUDA", cuda), ("C++", cpp)):
        if unresolved := unresolved_project_includes(text):
            raise AmalgamationError(f"{name} source still includes {unresolved}")
    flags = target.cuda_flags
    digest = hashlib.sha256((cuda + "\0" + cpp + "\0" + " ".join(flags)).encode()).hexdigest()[:16]
    docstring = "\n".join([
        f"{leaderboard} submission: tcgemm {lib.version} ({target.description}, cuBLAS fallback), one file.",
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
        '"@CUDA_FLAGS@"': repr(flags),
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
    parser.add_argument("--gpu", default=DEFAULT_GPU,
                        help=f"the leaderboard's GPU: {' or '.join(TARGETS)} (the '#!POPCORN gpu' line and the kernel "
                             f"family built in; '' for no line and {DEFAULT_GPU}'s family)")
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
