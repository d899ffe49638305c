#include "common/device_info.hpp"

#include "common/build_info.hpp"
#include "common/cuda_check.hpp"

#include "common/gpu_runtime.hpp"

#include <algorithm>
#include <sstream>

namespace ks {

int visible_device_count() {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) {
    (void)cudaGetLastError();
    throw NoDeviceError(std::string("no ") + kRuntimeName +
                        " driver is installed or loadable on this machine, so no GPU is usable");
  }
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    std::string why = err == cudaSuccess ? "the driver reports 0 devices" : cudaGetErrorString(err);
    throw NoDeviceError(std::string("no ") + kRuntimeName + " device is visible (" + why + ")");
  }
  return count;
}

void require_device(int index) {
  const int count = visible_device_count();
  if (index < 0 || index >= count) {
    throw NoDeviceError("CUDA device " + std::to_string(index) + " does not exist: " +
                        std::to_string(count) + " device(s) visible (indices 0.." +
                        std::to_string(count - 1) + ")");
  }
}

bool gpu_available(std::string* why_not) {
  try {
    visible_device_count();
    return true;
  } catch (const NoDeviceError& e) {
    if (why_not) *why_not = e.what();
    return false;
  }
}

DeviceFacts query_device(int index) {
  require_device(index);
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  auto attr = [index](cudaDeviceAttr a) {
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, a, index));
    return v;
  };
  DeviceFacts d;
  d.index = index;
  d.name = p.name;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) d.pci_bus_id = bus;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.warp_size = p.warpSize;
  d.regs_per_block = p.regsPerBlock;
  d.smem_per_block = p.sharedMemPerBlock;
#if defined(KS_HIP)  // HIP's properties name a compute unit's limits differently, and lack two
  d.max_blocks_per_sm = 0;
  d.regs_per_sm = 0;
  d.smem_per_block_optin = p.sharedMemPerBlock;
  d.smem_per_sm = p.maxSharedMemoryPerMultiProcessor;
#else
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.smem_per_block_optin = p.sharedMemPerBlockOptin;
  d.smem_per_sm = p.sharedMemPerMultiprocessor;
#endif
  d.l2_bytes = p.l2CacheSize;
  d.global_mem_bytes = p.totalGlobalMem;
  d.sm_clock_khz = attr(cudaDevAttrClockRate);
  d.mem_clock_khz = attr(cudaDevAttrMemoryClockRate);
  d.bus_width_bits = p.memoryBusWidth;
  d.fp32_to_fp64_ratio = attr(cudaDevAttrSingleToDoublePrecisionPerfRatio);
  CUDA_CHECK(cudaDriverGetVersion(&d.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&d.runtime_version));
#if defined(KS_HIP)
  d.gfx_arch = p.gcnArchName;  // "gfx90a:sramecc+:xnack-": the target, then its features
  d.gfx_arch = d.gfx_arch.substr(0, d.gfx_arch.find(':'));
#endif
  return d;
}

std::string CudaArch::str() const {
  std::string s = std::to_string(number);
  if (suffix) s += suffix;
  return s;
}

namespace {

CudaArch parse_arch(const std::string& tok) {
  std::size_t pos = 0;
  CudaArch a;
  try {
    a.number = std::stoi(tok, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument("bad CUDA architecture '" + tok + "'");
  }
  if (pos + 1 == tok.size() && (tok[pos] == 'a' || tok[pos] == 'f')) {
    a.suffix = tok[pos];
  } else if (pos != tok.size() || a.number < 10) {
    throw std::invalid_argument("bad CUDA architecture '" + tok + "'");
  }
  return a;
}

std::vector<CudaArch> parse_arch_list(const std::string& list) {
  std::vector<CudaArch> out;
  std::stringstream ss(list);
  std::string tok;
  while (std::getline(ss, tok, ','))
    if (!tok.empty()) out.push_back(parse_arch(tok));
  return out;
}

}  // namespace

ImageSet parse_image_spec(const std::string& spec) {
  ImageSet s;
  s.spec = spec;
  if (spec.rfind("unknown:", 0) == 0) return s;
  if (spec.rfind("hip:", 0) == 0) {
    std::stringstream ss(spec.substr(4));
    for (std::string tok; std::getline(ss, tok, ',');) {
      if (tok.rfind("gfx", 0) != 0 || tok.size() < 6) throw std::invalid_argument("bad AMD GPU target '" + tok + "'");
      s.gfx.push_back(tok.substr(0, tok.find(':')));
    }
    if (s.gfx.empty()) throw std::invalid_argument("bad image spec '" + spec + "' (no AMD GPU target)");
    s.known = true;
    return s;
  }
  const auto semi = spec.find(';');
  if (spec.rfind("sass:", 0) != 0 || semi == std::string::npos || spec.compare(semi + 1, 4, "ptx:") != 0)
    throw std::invalid_argument("bad image spec '" + spec + "' (want sass:LIST;ptx:LIST)");
  s.sass = parse_arch_list(spec.substr(5, semi - 5));
  s.ptx = parse_arch_list(spec.substr(semi + 5));
  s.known = true;
  return s;
}

ImageSet compiled_images() { return parse_image_spec(KS_CUDA_ARCHS); }

ImageVerdict image_for_device(const ImageSet& images, int cc_major, int cc_minor) {
  ImageVerdict v;
  const int cc = cc_major * 10 + cc_minor;
  const std::string sm = "sm_" + std::to_string(cc);
  v.advice = "build with CMAKE_CUDA_ARCHITECTURES=" + std::to_string(cc) + " (or CUDAARCHS=" +
             std::to_string(cc) + ")";
  if (!images.known) {
    v.text = "SASS for " + sm + ": unknown (built with CMAKE_CUDA_ARCHITECTURES=" +
             images.spec.substr(images.spec.find(':') + 1) + ")";
    return v;
  }
  const CudaArch* best = nullptr;
  for (const CudaArch& a : images.sass) {
    const bool runs = a.suffix == 'a' ? a.number == cc
                                      : a.number / 10 == cc_major && a.number % 10 <= cc_minor;
    if (runs && (!best || a.number > best->number)) best = &a;
  }
  if (best) {
    v.kind = ImageKind::Sass;
    v.arch = *best;
    v.advice.clear();
    v.text = best->number == cc ? "SASS for " + sm + ": yes"
                                : "SASS for " + sm + ": yes, via sm_" + best->str() +
                                      " machine code (binary-compatible within the major version)";
    return v;
  }
  for (const CudaArch& a : images.ptx) {
    const bool jits = a.suffix == 'a' ? a.number == cc : a.number <= cc;
    if (jits && (!best || a.number > best->number)) best = &a;
  }
  if (best) {
    v.kind = ImageKind::Ptx;
    v.arch = *best;
    v.text = "SASS for " + sm + ": no; PTX only: the driver will JIT-compile compute_" + best->str() +
             " PTX at start-up (slower start, no " + sm + "-specific code)";
    return v;
  }
  v.kind = ImageKind::None;
  v.text = "SASS for " + sm + ": no; PTX: none usable: this binary cannot run kernels on this device";
  return v;
}

ImageVerdict image_for_device(const ImageSet& images, const DeviceFacts& d) {
  if (d.gfx_arch.empty()) return image_for_device(images, d.cc_major, d.cc_minor);
  ImageVerdict v;
  const bool built = std::find(images.gfx.begin(), images.gfx.end(), d.gfx_arch) != images.gfx.end();
  if (built) {
    v.kind = ImageKind::Sass;
    v.text = "code object for " + d.gfx_arch + ": yes";
  } else {
    v.kind = ImageKind::None;
    v.text = "code object for " + d.gfx_arch + ": no (built for " + images.spec.substr(images.spec.find(':') + 1) +
             "): this binary cannot run kernels on this device";
    v.advice = "build with KS_HIP_TARGETS=" + d.gfx_arch + " (a wave64 gfx9 target)";
  }
  return v;
}

std::string format_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string fp64_ratio_text(int r) {
  if (r <= 0) return "unknown";
  return "1:" + std::to_string(r) + (r <= 2 ? " (full-rate FP64 class)" : " (consumer-class FP64)");
}

namespace {
std::string kib(std::size_t b) { return std::to_string(b / 1024) + " KiB"; }
std::string mib(std::size_t b) {
  std::ostringstream os;
  os.precision(3);
  os << b / (1024.0 * 1024.0) << " MiB";
  return os.str();
}
}  // namespace

std::string format_device_text(const DeviceFacts& d, const ImageVerdict& v, const LoadedImage& loaded) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(1);
  os << "Device " << d.index << ": " << d.name << " (" << d.pci_bus_id << ")\n"
     << "  compute capability         " << d.cc_major << "." << d.cc_minor << "\n"
     << "  multiprocessors (SMs)      " << d.sm_count << "\n"
     << "  max threads per block      " << d.max_threads_per_block << "\n"
     << "  max resident blocks / SM   " << d.max_blocks_per_sm << "\n"
     << "  max resident warps / SM    " << d.max_warps_per_sm() << " (" << d.max_threads_per_sm
     << " threads)\n"
     << "  registers per block / SM   " << d.regs_per_block << " / " << d.regs_per_sm << "\n"
     << "  shared memory per block    " << kib(d.smem_per_block) << " (opt-in max "
     << kib(d.smem_per_block_optin) << ")\n"
     << "  shared memory per SM       " << kib(d.smem_per_sm) << "\n"
     << "  L2 cache                   " << mib(static_cast<std::size_t>(d.l2_bytes)) << "\n"
     << "  global memory              " << d.global_mem_bytes / (1024.0 * 1024 * 1024) << " GiB\n"
     << "  SM clock (peak)            " << d.sm_clock_khz / 1000 << " MHz\n"
     << "  memory clock (peak)        " << d.mem_clock_khz / 1000 << " MHz, " << d.bus_width_bits
     << "-bit bus\n"
     << "  theoretical bandwidth      " << d.theoretical_bandwidth_gbs() << " GB/s\n"
     << "  FP64:FP32 throughput       " << fp64_ratio_text(d.fp32_to_fp64_ratio) << "\n"
     << "  driver / runtime           " << format_version(d.driver_version) << " / "
     << format_version(d.runtime_version) << "\n"
     << "  binary built for           " << KS_CUDA_ARCHITECTURES_SETTING << "\n"
     << "  " << v.text << "\n";
  if (!v.advice.empty()) os << "  to run natively:           " << v.advice << "\n";
  if (loaded.ok) {
    os << "  driver loaded              sm_" << loaded.binary_version << " code from compute_"
       << loaded.ptx_version << "\n";
  } else {
    os << "  driver loaded              nothing: " << loaded.error << "\n";
  }
  return os.str();
}

void write_device_json(json::Writer& w, const DeviceFacts& d, const ImageVerdict& v,
                       const LoadedImage& loaded) {
  static const char* kinds[] = {"sass", "ptx", "none", "unknown"};
  w.begin_object()
      .value("index", d.index)
      .value("name", d.name)
      .value("pci_bus_id", d.pci_bus_id)
      .value("compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor))
      .value("sm_count", d.sm_count)
      .value("max_threads_per_block", d.max_threads_per_block)
      .value("max_blocks_per_sm", d.max_blocks_per_sm)
      .value("max_warps_per_sm", d.max_warps_per_sm())
      .value("registers_per_block", d.regs_per_block)
      .value("registers_per_sm", d.regs_per_sm)
      .value("shared_memory_per_block_bytes", static_cast<std::uint64_t>(d.smem_per_block))
      .value("shared_memory_per_block_optin_bytes", static_cast<std::uint64_t>(d.smem_per_block_optin))
      .value("shared_memory_per_sm_bytes", static_cast<std::uint64_t>(d.smem_per_sm))
      .value("l2_bytes", d.l2_bytes)
      .value("global_memory_bytes", static_cast<std::uint64_t>(d.global_mem_bytes))
      .value("sm_clock_peak_khz", d.sm_clock_khz)
      .value("memory_clock_peak_khz", d.mem_clock_khz)
      .value("memory_bus_width_bits", d.bus_width_bits)
      .value("theoretical_bandwidth_gbs", d.theoretical_bandwidth_gbs())
      .value("fp32_to_fp64_ratio", d.fp32_to_fp64_ratio)
      .value("driver_version", format_version(d.driver_version))
      .value("runtime_version", format_version(d.runtime_version))
      .begin_object("binary")
      .value("cuda_architectures", KS_CUDA_ARCHITECTURES_SETTING)
      .value("images", std::string(KS_CUDA_ARCHS))
      .value("image_for_device", kinds[static_cast<int>(v.kind)])
      .value("image_arch", v.kind == ImageKind::Sass || v.kind == ImageKind::Ptx ? v.arch.str() : "")
      .value("verdict", v.text)
      .value("advice", v.advice)
      .value("loaded", loaded.ok)
      .value("loaded_binary_version", loaded.binary_version)
      .value("loaded_ptx_version", loaded.ptx_version)
      .value("load_error", loaded.error)
      .end_object()
      .end_object();
}

}  // namespace ks
