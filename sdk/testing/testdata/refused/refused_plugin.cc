// refused_plugin: two plugins the real hosts refuse, so the fake host's test can show it refuses
// them too, with the hosts' messages (portico/sdk/manifest.h):
//  - built by portico_add_plugin() (target portico-fakehost-refused): a hand-written entry whose
//    descriptor names the plugin "someone-else" while its manifest says "fakehost-refused";
//  - built as a plain MODULE library (portico-fakehost-nomanifest): no embedded manifest at all.
#include "portico/sdk/plugin.h"

namespace {

portico_code Register(const portico_registrar*, portico_sink*) { return PORTICO_OK; }

}  // namespace

extern "C" PORTICO_EXPORT const portico_plugin_v1_descriptor* portico_plugin_v1(void) {
  static const portico_plugin_v1_descriptor descriptor = {
      sizeof(portico_plugin_v1_descriptor),
      PORTICO_ABI_MAJOR,
      PORTICO_ABI_MINOR,
      {"someone-else", 12},
      {"0.0.1", 5},
      {PORTICO_SDK_VERSION, sizeof(PORTICO_SDK_VERSION) - 1},
      &Register};
  return &descriptor;
}
