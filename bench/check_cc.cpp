// check_cc: what this GPU is and whether this binary carries code for it.
//   check_cc [--device N | --all] [--json]
// Exit 0 on success, 1 with one clear line when no GPU (or driver) is usable or the output cannot be
// written, 2 for bad flags.
#include "bench/cli.hpp"
#include "common/device_info.hpp"

#include <iostream>
#include <vector>

namespace {

int check_cc(int argc, char** argv) {
  CLI::App app{"check_cc: report each GPU and whether this binary has code for it"};
  app.name("check_cc");
  app.set_version_flag("--version", ks::cli::version_line("check_cc"));
  int device = 0;
  bool all = false;
  bool as_json = false;
  auto* dev_opt = app.add_option("--device", device, "Device index to report (default 0)")
                      ->check(ks::cli::whole_number(0, 1023));
  app.add_flag("--all", all, "Report every visible device")->excludes(dev_opt);
  app.add_flag("--json", as_json, "Print JSON instead of text");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ks::cli::handle_parse_error(app, e);
  }

  return ks::cli::guarded("check_cc", [&] {
    const int count = ks::visible_device_count();
    std::vector<int> devices;
    if (all) {
      for (int i = 0; i < count; ++i) devices.push_back(i);
    } else {
      ks::require_device(device);
      devices.push_back(device);
    }
    const ks::ImageSet images = ks::compiled_images();
    ks::json::Writer w(std::cout);
    if (as_json) w.begin_array();
    for (int i : devices) {
      const ks::DeviceFacts d = ks::query_device(i);
      const ks::ImageVerdict v = ks::image_for_device(images, d);
      const ks::LoadedImage loaded = ks::probe_loaded_image(i);
      if (as_json) {
        ks::write_device_json(w, d, v, loaded);
      } else {
        std::cout << ks::format_device_text(d, v, loaded);
      }
    }
    if (as_json) {
      w.end_array();
      std::cout << "\n";
    }
    return static_cast<int>(ks::cli::kOk);
  });
}

}  // namespace

int main(int argc, char** argv) {
  ks::cli::ignore_sigpipe();
  return ks::cli::finish("check_cc", check_cc(argc, argv));
}
