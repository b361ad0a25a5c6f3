// `tcgemm info`: what the numbers from check and bench were measured on.
#include <cstdio>
#include <cstring>
#include <string>

#include "arg_parser.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "cuda_check.hpp"
#include "device_info.hpp"
#include "support/kernel_variants.hpp"
#include "tcgemm/tcgemm.hpp"

namespace tcgemm::cli {

void add_info_options(ArgParser& parser) {
  parser.add_option("device", "N", "CUDA device index (default 0)");
}

int run_info(const ArgParser& parser) {
  const auto device = parse_int(parser.get("device", "0"), 0, 1023);
  if (!device) return usage_error(parser, "--device wants a device index");
  const BuildInfo build = build_info();
  auto row = [](const char* label, const std::string& value) { std::printf("%-22s %s\n", label, value.c_str()); };
  // The build first: what it holds is worth knowing on a machine without a GPU too.
  row("tcgemm", format("%s, built with CUDA %s", build.version,
                       cuda_version_string(build.cuda_runtime_version).c_str()));
  row("  architectures", build.cuda_archs);
  row("  kernel families", build.kernel_families);
  std::fflush(stdout);
  if (!select_device(static_cast<int>(*device))) return kExitUsage;

  const DeviceInfo d = query_device_info();

  row("device", format("%d of %d: %s (PCI %s)", d.index, d.device_count, d.name.c_str(), d.pci_bus_id.c_str()));
  row("compute capability", format("%d.%d (%s)", d.cc_major, d.cc_minor, d.arch().c_str()));
  row("SMs", std::to_string(d.sm_count));
  row("max SM clock", format("%d MHz", d.sm_clock_max_khz / 1000));
  row("max memory clock", format("%d MHz, %d-bit bus, %.0f GB/s theoretical", d.mem_clock_max_khz / 1000,
                                 d.mem_bus_width_bits, d.peak_bandwidth_gbs()));
  row("L2 cache", format("%.1f MiB", d.l2_bytes / 1048576.0));
  row("memory", format("%.1f GiB", static_cast<double>(d.total_memory) / (1024.0 * 1024.0 * 1024.0)));
  row("smem per block opt-in", format("%d KiB", d.smem_per_block_optin / 1024));
  row("driver", format("supports CUDA %s (%d)", cuda_version_string(d.driver_version).c_str(), d.driver_version));
  row("CUDA runtime", format("%s (%d)", cuda_version_string(d.runtime_version).c_str(), d.runtime_version));
  row("cuBLAS", d.cublas_version());
  const Backend family = support::device_family(d.index);
  const bool built = support::family_built(family);
  row("  runs here", family == Backend::none ? format("no tcgemm kernel family for %s: cuBLAS fallback", d.arch().c_str())
                     : built ? format("%s (this device is %s)", to_string(family), d.arch().c_str())
                             : format("%s would, but this build lacks it: cuBLAS fallback", to_string(family)));

  // What a plain call would do on this device: the plan's reason says whether
  // the kernels compiled in can run here or everything falls back to cuBLAS.
  const Shape shape{4096, 4096, 4096};
  const Layout layout{Op::N, Op::N};
  const Operands ops = operands_for(shape, layout);
  const ElementBuffer a(ops.a_elems), b(ops.b_elems), c(ops.c_elems);
  for (const DType dtype : {DType::f16, DType::bf16}) {
    const Plan p = plan(make_args(dtype, layout, shape, ops, a.data(), b.data(), c.data(), 1.0f, 0.0f, nullptr));
    const std::string label = format("plan %s %s 4096^3", to_string(dtype), layout.str().c_str());
    if (p.status != Status::ok)
      row(label.c_str(), format("rejected (%s): %s", to_string(p.status), p.reason.c_str()));
    else
      row(label.c_str(),
          format("%s: %s", p.kernel.empty() ? to_string(p.backend) : p.kernel.c_str(), p.reason.c_str()));
  }
  return kExitOk;
}

}  // namespace tcgemm::cli
